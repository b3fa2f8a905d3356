import { HARNESS_TABLE, type Harness } from "./harness-table";
import { expandBuiltin, parseTool, type UniversalTool } from "./vocabulary";

/** A disallowed tool: a universal tool, its string form, or a harness-native name. */
export type DisallowedTool = UniversalTool | string;

export interface MapToolsOptions {
  /** Removed after mapping, so a universal name removes every native tool it maps to. */
  disallowedTools?: readonly DisallowedTool[];
}

export interface MappedTools {
  /** Native tool names, de-duplicated in first-seen order. */
  tools: string[];
  /** What the caller should know: tools this harness lacks, disallowed names that matched nothing. */
  warnings: string[];
}

/** How `harness` names tool `tool` of MCP server `server`. */
export function mcpToolName(harness: Harness, server: string, tool: string): string {
  return HARNESS_TABLE.harnesses[harness].mcpToolName
    .replace("{server}", () => server)
    .replace("{tool}", () => tool);
}

/** The native names one universal tool becomes on `harness` (none when the harness lacks it). */
export function nativeNames(harness: Harness, tool: UniversalTool): string[] {
  switch (tool.kind) {
    case "builtin":
      return expandBuiltin(tool.name).flatMap((row) => HARNESS_TABLE.tools[row][harness]);
    case "custom":
      return [tool.name];
    case "mcp":
      return [mcpToolName(harness, tool.server, tool.tool)];
  }
}

/**
 * Universal tools to `harness`'s tool names through the data table: one-to-many,
 * de-duplicated in first-seen order, tools the harness lacks dropped with a warning, and
 * `disallowedTools` removed last.
 */
export function mapTools(
  harness: Harness,
  tools: readonly UniversalTool[],
  options: MapToolsOptions = {},
): MappedTools {
  const title = HARNESS_TABLE.harnesses[harness].title;
  const names = new Set<string>();
  const warnings = new Set<string>();
  for (const tool of tools) {
    if (tool.kind !== "builtin") {
      for (const name of nativeNames(harness, tool)) names.add(name);
      continue;
    }
    for (const row of expandBuiltin(tool.name)) {
      const native = HARNESS_TABLE.tools[row][harness];
      if (native.length === 0) warnings.add(`${row} has no ${title} equivalent; it was dropped.`);
      for (const name of native) names.add(name);
    }
  }

  for (const entry of options.disallowedTools ?? []) {
    const resolved = resolveDisallowed(harness, entry);
    let removed = false;
    for (const name of resolved.names) removed = names.delete(name) || removed;
    // A native name that removes nothing is most likely a typo or another harness's name.
    if (!removed && !resolved.universal) {
      warnings.add(`disallowedTools entry ${JSON.stringify(entry)} matches no ${title} tool.`);
    }
  }
  return { tools: [...names], warnings: [...warnings] };
}

/** The native names `disallowedTools` stands for on `harness`, de-duplicated. */
export function disallowedNames(harness: Harness, disallowed: readonly DisallowedTool[]): string[] {
  return [...new Set(disallowed.flatMap((entry) => resolveDisallowed(harness, entry).names))];
}

function resolveDisallowed(
  harness: Harness,
  entry: DisallowedTool,
): { names: string[]; universal: boolean } {
  if (typeof entry !== "string") return { names: nativeNames(harness, entry), universal: true };
  const parsed = parseTool(entry);
  // Universal names win: "Read" means the universal Read, which is also Claude Code's name.
  if (parsed.ok) return { names: nativeNames(harness, parsed.tool), universal: true };
  return { names: [entry], universal: false };
}
