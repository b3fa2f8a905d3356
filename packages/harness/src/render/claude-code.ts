import type { McpServerConfig } from "../enrichers";
import { type HarnessFrontmatter, isRemote, type RenderInput } from "./context";
import { harnessHeaders } from "./env";

/**
 * Claude Code subagent frontmatter (`.claude/agents/<name>.md`): `tools` is a comma-separated
 * allowlist and its absence grants every tool, so an agent that lists tools but keeps none on
 * Claude Code gets an explicit empty list rather than no field.
 */
export function claudeCodeFrontmatter(input: RenderInput): HarnessFrontmatter {
  const { agent, toolMap, mapped, disallowed } = input;
  const frontmatter: Record<string, unknown> = {
    name: agent.name,
    description: agent.description,
  };
  const warnings: string[] = [];
  if (!toolMap.allTools) {
    frontmatter.tools = mapped.tools.length > 0 ? mapped.tools.join(", ") : [];
    if (mapped.tools.length === 0) warnings.push("The agent has no Claude Code tools left.");
  } else if (disallowed.length > 0) {
    frontmatter.disallowedTools = disallowed.join(", ");
  }
  if (agent.model !== undefined) frontmatter.model = agent.model;
  // By name: the servers themselves go in .mcp.json, where Claude Code documents expanding
  // environment variables in headers, so the key is read from the environment there.
  const servers = Object.keys(toolMap.mcpServers);
  if (servers.length > 0) frontmatter.mcpServers = servers;
  return { frontmatter, warnings };
}

/** One server as `.mcp.json` holds it. */
export function claudeCodeServer(config: McpServerConfig): Record<string, unknown> {
  if (isRemote(config)) {
    const headers = harnessHeaders("claude-code", config);
    return { type: "http", url: config.url, ...(headers ? { headers } : {}) };
  }
  return {
    type: "stdio",
    command: config.command,
    ...(config.args ? { args: config.args } : {}),
    ...(config.env ? { env: config.env } : {}),
  };
}
