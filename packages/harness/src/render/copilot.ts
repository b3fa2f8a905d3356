import type { McpServerConfig } from "../enrichers";
import { type HarnessFrontmatter, isRemote, type RenderInput, toolsOfServer } from "./context";
import { harnessHeaders, renamedEnvWarnings } from "./env";

/** GitHub Copilot's limit on a custom agent's prompt, in characters. */
export const COPILOT_PROMPT_LIMIT = 30_000;

/**
 * GitHub Copilot custom agent frontmatter (`.github/agents/<name>.agent.md`): `tools` is a
 * list (absent = every tool, `[]` = none) and `mcp-servers` configures servers inline.
 */
export function copilotFrontmatter(input: RenderInput): HarnessFrontmatter {
  const { agent, toolMap, mapped, disallowed } = input;
  const frontmatter: Record<string, unknown> = {
    name: agent.name,
    description: agent.description,
  };
  const warnings: string[] = [];
  if (!toolMap.allTools) {
    frontmatter.tools = mapped.tools;
    if (mapped.tools.length === 0) warnings.push("The agent has no GitHub Copilot tools left.");
  } else if (disallowed.length > 0) {
    warnings.push(
      `GitHub Copilot agent files have no deny list, so disallowedTools (${disallowed.join(", ")}) cannot apply to an agent that gets every tool; list its tools instead.`,
    );
  }
  if (agent.model !== undefined) frontmatter.model = agent.model;
  const servers = Object.entries(toolMap.mcpServers);
  if (servers.length > 0) {
    frontmatter["mcp-servers"] = Object.fromEntries(
      servers.map(([name, config]) => [name, copilotServer(config, toolsOfServer(toolMap, name))]),
    );
    warnings.push(
      "GitHub Copilot reads mcp-servers in agent files in the cloud agent and the CLI; VS Code and other IDEs ignore it.",
      ...renamedEnvWarnings(
        "copilot",
        servers.map(([, config]) => config),
      ),
    );
  }
  if (agent.prompt.length > COPILOT_PROMPT_LIMIT) {
    warnings.push(
      `The prompt is ${agent.prompt.length} characters; GitHub Copilot reads at most ${COPILOT_PROMPT_LIMIT}.`,
    );
  }
  return { frontmatter, warnings };
}

/** One server as an agent file's `mcp-servers` holds it, offering `tools` (none named: all). */
export function copilotServer(config: McpServerConfig, tools: string[]): Record<string, unknown> {
  // The server's own `tools` filter: only what the agent uses, or everything when it uses none by name.
  const allowed = tools.length > 0 ? tools : ["*"];
  if (isRemote(config)) {
    const headers = harnessHeaders("copilot", config);
    return { type: "http", url: config.url, ...(headers ? { headers } : {}), tools: allowed };
  }
  return {
    type: "local",
    command: config.command,
    args: config.args ?? [],
    ...(config.env ? { env: config.env } : {}),
    tools: allowed,
  };
}
