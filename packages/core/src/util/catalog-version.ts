import { createHash } from "node:crypto";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { Versioned } from "../ports";

/**
 * A short name for one state of the listed catalog: every write stamps its item with a new
 * revision and time, so any change (a tool added, removed, edited, enabled, disabled) gives a
 * new version, and the same items give the same version in every process. What is built from
 * the catalog (the search index) is kept per version.
 */
export function catalogVersion(
  toolsets: readonly Pick<Versioned<ToolsetSpec>, "name" | "revision" | "updatedAt">[],
  tools: readonly Pick<Versioned<ToolSpec>, "id" | "revision" | "updatedAt">[],
): string {
  const stamps = [
    ...toolsets.map((set) => `s:${set.name}@${set.revision}@${set.updatedAt}`),
    ...tools.map((tool) => `t:${tool.id}@${tool.revision}@${tool.updatedAt}`),
  ].sort();
  return createHash("sha256").update(stamps.join("\n")).digest("base64url").slice(0, 16);
}
