import type { McpServerConfig } from "../enrichers";
import { HARNESS_TABLE, TABLE_TOOLS } from "../harness-table";
import { type HarnessFrontmatter, isRemote, type RenderInput } from "./context";
import { harnessHeaders } from "./env";

export const OPENCODE_TOOL_FORMATS = ["permission", "legacy"] as const;
/** `permission`: the current `permission:` map. `legacy`: the deprecated `tools:` booleans. */
export type OpencodeToolFormat = (typeof OPENCODE_TOOL_FORMATS)[number];

export const OPENCODE_MODES = ["primary", "subagent", "all"] as const;
export type OpencodeMode = (typeof OPENCODE_MODES)[number];

export interface OpencodeOptions {
  tools?: OpencodeToolFormat;
  /** OpenCode's own agent mode; absent leaves OpenCode's default (`all`). */
  mode?: OpencodeMode;
}

/** Every built-in OpenCode tool name the table knows, in table order. */
const OPENCODE_TOOLS = [
  ...new Set(TABLE_TOOLS.flatMap((row) => HARNESS_TABLE.tools[row].opencode)),
];

/** The permission key that governs an OpenCode tool (most are the tool's own name). */
export function opencodePermissionKey(tool: string): string {
  return HARNESS_TABLE.opencodePermissionKeys[tool] ?? tool;
}

/**
 * OpenCode agent frontmatter (`.opencode/agents/<name>.md`); the file name is the agent's
 * name, so there is no `name` field. A listed agent is closed, like Claude Code's and
 * Copilot's allowlists: `"*": deny` first (the last matching rule wins), then every built-in
 * key allowed or denied, then the MCP and custom tools it was given.
 */
export function opencodeFrontmatter(
  input: RenderInput,
  options: OpencodeOptions = {},
): HarnessFrontmatter {
  const { agent, toolMap, mapped, disallowed } = input;
  const format = options.tools ?? "permission";
  const frontmatter: Record<string, unknown> = { description: agent.description };
  const warnings: string[] = [];
  if (options.mode !== undefined) frontmatter.mode = options.mode;
  if (agent.model !== undefined) frontmatter.model = agent.model;

  if (!toolMap.allTools) {
    if (format === "legacy") {
      frontmatter.tools = legacyTools(mapped.tools);
    } else {
      frontmatter.permission = permissionMap(mapped.tools);
      warnings.push(...sharedKeyWarnings(mapped.tools, "allow"));
    }
    if (mapped.tools.length === 0) warnings.push("The agent has no OpenCode tools left.");
  } else if (disallowed.length > 0) {
    if (format === "legacy") {
      frontmatter.tools = Object.fromEntries(disallowed.map((tool) => [tool, false]));
    } else {
      frontmatter.permission = Object.fromEntries(
        disallowed.map((tool) => [opencodePermissionKey(tool), "deny"]),
      );
      warnings.push(...sharedKeyWarnings(disallowed, "deny"));
    }
  }

  return { frontmatter, warnings };
}

/**
 * One server as `opencode.json`'s `mcp` holds it. A server authenticated by a header gets
 * `oauth: false`: otherwise OpenCode answers a 401 by starting an OAuth flow Toolbus has not.
 */
export function opencodeServer(config: McpServerConfig): Record<string, unknown> {
  if (isRemote(config)) {
    const headers = harnessHeaders("opencode", config);
    return {
      type: "remote",
      url: config.url,
      ...(config.envHeaders ? { oauth: false } : {}),
      ...(headers ? { headers } : {}),
    };
  }
  return {
    type: "local",
    command: [config.command, ...(config.args ?? [])],
    ...(config.env ? { environment: config.env } : {}),
  };
}

function permissionMap(tools: readonly string[]): Record<string, string> {
  const permission: Record<string, string> = { "*": "deny" };
  for (const tool of OPENCODE_TOOLS) permission[opencodePermissionKey(tool)] = "deny";
  // Keys already present keep their place, so built-ins stay in table order.
  for (const tool of tools) permission[opencodePermissionKey(tool)] = "allow";
  return permission;
}

function legacyTools(tools: readonly string[]): Record<string, boolean> {
  const map: Record<string, boolean> = {};
  for (const tool of OPENCODE_TOOLS) map[tool] = false;
  for (const tool of tools) map[tool] = true;
  return map;
}

/** One key governs several tools (`edit` governs `write` too): say when that widens a rule. */
function sharedKeyWarnings(tools: readonly string[], action: "allow" | "deny"): string[] {
  const warnings: string[] = [];
  const keys = new Set(tools.map(opencodePermissionKey));
  for (const key of keys) {
    const governed = OPENCODE_TOOLS.filter((tool) => opencodePermissionKey(tool) === key);
    const extra = governed.filter((tool) => !tools.includes(tool));
    if (governed.length > 1 && extra.length > 0) {
      warnings.push(
        `OpenCode's "${key}" permission governs ${governed.join(" and ")}, so ${action === "allow" ? "allowing" : "denying"} it also ${action === "allow" ? "allows" : "denies"} ${extra.join(", ")}; use opencodeTools: "legacy" to set them apart.`,
      );
    }
  }
  return warnings;
}
