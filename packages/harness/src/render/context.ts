import type { Agent } from "../agent";
import type { McpServerConfig, ToolMap } from "../enrichers";
import type { MappedTools } from "../mapping";

/** What every harness renderer gets: the agent, its enriched tool map, and the mapped names. */
export interface RenderInput {
  agent: Agent;
  toolMap: ToolMap;
  /** Native names of `toolMap.tools` with `disallowedTools` removed. */
  mapped: MappedTools;
  /** Native names `disallowedTools` stands for; used when the agent gets every tool. */
  disallowed: readonly string[];
}

/** The frontmatter one harness reads, and what the caller should know about it. */
export interface HarnessFrontmatter {
  frontmatter: Record<string, unknown>;
  warnings: string[];
}

/** The MCP tool names of `server` among the agent's tools. */
export function toolsOfServer(toolMap: ToolMap, server: string): string[] {
  return [
    ...new Set(
      toolMap.tools.flatMap((tool) =>
        tool.kind === "mcp" && tool.server === server ? [tool.tool] : [],
      ),
    ),
  ];
}

export function isRemote(
  config: McpServerConfig,
): config is Extract<McpServerConfig, { url: string }> {
  return "url" in config;
}
