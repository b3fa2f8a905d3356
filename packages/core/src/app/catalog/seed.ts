import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { CatalogStore } from "../../ports";
import { canonicalJson } from "../../util/canonical-json";
import { validateCatalog } from "./consistency";

/**
 * Writes the built-in catalog at start-up or deploy. What the code owns (schemas,
 * descriptions, examples, limits) is updated; what the stage owns survives: a tool's whole
 * `availability` (enabled, modes, minRole) is the code's default only until the tool first
 * exists, then an administrator's. Unchanged entries are not written, so seeding is cheap.
 */
export async function seedCatalog(
  catalog: CatalogStore,
  toolsets: readonly ToolsetSpec[],
  tools: readonly ToolSpec[],
): Promise<{ written: string[] }> {
  validateCatalog(toolsets, tools);
  const written: string[] = [];
  for (const toolset of toolsets) {
    const existing = await catalog.getToolset(toolset.name);
    if (existing && same(strip(existing), toolset)) continue;
    await catalog.putToolset(toolset, existing?.revision);
    written.push(`toolset:${toolset.name}`);
  }
  for (const tool of tools) {
    const existing = await catalog.getTool(tool.id);
    const desired: ToolSpec = existing ? { ...tool, availability: existing.availability } : tool;
    if (existing && same(strip(existing), desired)) continue;
    await catalog.putTool(desired, existing?.revision);
    written.push(`tool:${tool.id}`);
  }
  return { written };
}

function strip<T extends { revision: number; updatedAt: string }>(stored: T) {
  const { revision: _revision, updatedAt: _updatedAt, ...spec } = stored;
  return spec;
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
