/**
 * The harness facts, as data: which native tools each universal tool becomes on each coding
 * harness, how each names MCP tools and where it reads agent files. Everything that renders
 * agent files or the README table reads this one object, so a vendor renaming a tool is a
 * one-line change here (and a failing test until the expectations agree).
 *
 * Checked against each vendor's documentation on `verifiedOn`; `sources` names the pages.
 */

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` here is the harnesses' own syntax for reading the environment, not a JavaScript template.

import { HARNESSES } from "@toolbus/wire/schemas/agents";

export { HARNESSES };
export type Harness = (typeof HARNESSES)[number];

/** The universal tools the table maps; Todo and Bash are aliases handled by the vocabulary. */
export const TABLE_TOOLS = [
  "Read",
  "Write",
  "Edit",
  "Shell",
  "Glob",
  "Grep",
  "List",
  "LSP",
  "Skill",
  "TodoWrite",
  "TodoRead",
  "WebFetch",
  "WebSearch",
  "Question",
  "Subagent",
] as const;
export type TableTool = (typeof TABLE_TOOLS)[number];

export interface HarnessFacts {
  title: string;
  /** Where the harness reads a project agent; `<name>` is the agent's name. */
  agentPath: string;
  /** How the harness names a tool of an MCP server. */
  mcpToolName: `${string}{server}${string}{tool}${string}`;
  /**
   * Where the harness reads MCP servers' connection details: the agent file itself (`null`),
   * or a project file whose `key` maps server names to configs (the agent names them).
   */
  mcpServersFile: { path: string; key: string } | null;
  /**
   * How a value in that MCP configuration reads an environment variable, `{name}` standing
   * for the variable's name: `required` when the harness must have it, `optional` when an
   * unset variable may become an empty value. `namePrefix` is a prefix the harness insists
   * variable names carry.
   */
  envReference: { required: string; optional: string; namePrefix: string };
}

export interface Source {
  title: string;
  url: string;
}

export interface HarnessTable {
  verifiedOn: string;
  sources: Record<Harness, readonly Source[]>;
  harnesses: Record<Harness, HarnessFacts>;
  /** Native tool names per universal tool; an empty list means the harness has no such tool. */
  tools: Record<TableTool, Record<Harness, readonly string[]>>;
  /**
   * OpenCode gates tools by permission key; most keys are the tool's own name, these are not
   * (its `write` is governed by the `edit` permission).
   */
  opencodePermissionKeys: Readonly<Record<string, string>>;
  /** Caveats: where a vendor's documentation has moved on, and what else a reader should know. */
  notes: readonly string[];
}

export const HARNESS_TABLE: HarnessTable = {
  verifiedOn: "2026-11-21",
  sources: {
    "claude-code": [
      {
        title: "Claude Code tools reference",
        url: "https://code.claude.com/docs/en/tools-reference",
      },
      { title: "Claude Code subagents", url: "https://code.claude.com/docs/en/sub-agents" },
      { title: "Claude Code MCP", url: "https://code.claude.com/docs/en/mcp" },
      { title: "Claude Code permissions", url: "https://code.claude.com/docs/en/permissions" },
      {
        title: "Claude Code: environment variable expansion in .mcp.json",
        url: "https://code.claude.com/docs/en/mcp#environment-variable-expansion-in-mcp-json",
      },
    ],
    opencode: [
      { title: "OpenCode agents", url: "https://opencode.ai/docs/agents/" },
      { title: "OpenCode tools", url: "https://opencode.ai/docs/tools/" },
      { title: "OpenCode permissions", url: "https://opencode.ai/docs/permissions/" },
      { title: "OpenCode: migrate from V1", url: "https://opencode.ai/docs/migrate-v1/" },
      { title: "OpenCode MCP servers", url: "https://opencode.ai/docs/mcp-servers/" },
      { title: "OpenCode config: env vars", url: "https://opencode.ai/docs/config/#env-vars" },
    ],
    copilot: [
      {
        title: "GitHub Copilot custom agents configuration",
        url: "https://docs.github.com/en/copilot/reference/custom-agents-configuration",
      },
      {
        title: "Extending Copilot cloud agent with MCP",
        url: "https://docs.github.com/en/copilot/how-tos/use-copilot-agents/cloud-agent/extend-cloud-agent-with-mcp",
      },
      {
        title: "GitHub Copilot: MCP server environment variables and secrets",
        url: "https://docs.github.com/en/copilot/reference/custom-agents-configuration#mcp-server-environment-variables-and-secrets",
      },
    ],
  },
  harnesses: {
    "claude-code": {
      title: "Claude Code",
      agentPath: ".claude/agents/<name>.md",
      mcpToolName: "mcp__{server}__{tool}",
      mcpServersFile: { path: ".mcp.json", key: "mcpServers" },
      envReference: { required: "${{name}}", optional: "${{name}:-}", namePrefix: "" },
    },
    opencode: {
      title: "OpenCode",
      agentPath: ".opencode/agents/<name>.md",
      mcpToolName: "{server}_{tool}",
      mcpServersFile: { path: "opencode.json", key: "mcp" },
      envReference: { required: "{env:{name}}", optional: "{env:{name}}", namePrefix: "" },
    },
    copilot: {
      title: "GitHub Copilot",
      agentPath: ".github/agents/<name>.agent.md",
      mcpToolName: "{server}/{tool}",
      mcpServersFile: null,
      envReference: {
        required: "${{name}}",
        optional: "${{name}:-}",
        namePrefix: "COPILOT_MCP_",
      },
    },
  },
  tools: {
    Read: { "claude-code": ["Read"], opencode: ["read"], copilot: ["read"] },
    Write: { "claude-code": ["Write"], opencode: ["write"], copilot: ["edit"] },
    Edit: { "claude-code": ["Edit"], opencode: ["edit"], copilot: ["edit"] },
    Shell: { "claude-code": ["Bash"], opencode: ["bash"], copilot: ["execute"] },
    Glob: { "claude-code": ["Glob"], opencode: ["glob"], copilot: ["search"] },
    Grep: { "claude-code": ["Grep"], opencode: ["grep"], copilot: ["search"] },
    List: { "claude-code": ["Glob"], opencode: ["list"], copilot: ["search"] },
    LSP: { "claude-code": ["LSP"], opencode: ["lsp"], copilot: [] },
    Skill: { "claude-code": ["Skill"], opencode: ["skill"], copilot: [] },
    TodoWrite: {
      "claude-code": ["TaskCreate", "TaskUpdate"],
      opencode: ["todowrite"],
      copilot: ["todo"],
    },
    TodoRead: {
      "claude-code": ["TaskList", "TaskGet", "TaskUpdate"],
      opencode: ["todoread"],
      copilot: ["todo"],
    },
    WebFetch: { "claude-code": ["WebFetch"], opencode: ["webfetch"], copilot: ["web"] },
    WebSearch: { "claude-code": ["WebSearch"], opencode: ["websearch"], copilot: ["web"] },
    Question: { "claude-code": ["AskUserQuestion"], opencode: ["question"], copilot: [] },
    Subagent: { "claude-code": ["Agent"], opencode: ["task"], copilot: ["agent"] },
  },
  opencodePermissionKeys: { write: "edit" },
  notes: [
    "OpenCode now documents project agents in `.opencode/agents/` (plural); the singular `.opencode/agent/` is still read for backwards compatibility.",
    "OpenCode's `tools:` boolean map is deprecated since v1.1.1 in favour of `permission:`; `write` is governed by the `edit` permission key.",
    "OpenCode's tools page no longer lists `list` or `todoread` as tools, but its permissions page still has `list`, `todoread` and `todowrite` keys; the table keeps both names.",
    "OpenCode 2 reads V1 agent files and normalizes V1 permission keys (`bash`, `task`) to its own (`shell`, `subagent`); rendered files use the V1 keys both versions accept.",
    "Claude Code's interactive sessions use TaskCreate, TaskGet, TaskList and TaskUpdate; TodoWrite remains only in non-interactive mode and the Agent SDK. Claude Code has no separate list tool, so List maps to Glob.",
    "Claude Code rewrites characters outside A-Z a-z 0-9 _ - in an MCP server name to `_`; Toolbus only accepts server names made of those characters.",
    "Claude Code expands `${VAR}` and `${VAR:-default}` in `.mcp.json` (command, args, env, url, headers) and does not load a server whose required variable is unset, so the rendered file reads the API key as `${TOOLBUS_API_KEY}` and the run id as `${TOOLBUS_RUN_ID:-}`. The subagent's `mcpServers` names the server that `.mcp.json` configures.",
    "OpenCode reads MCP servers only from `opencode.json` (`mcp`), where `{env:VAR}` reads a variable and an unset one becomes an empty string; the rendered server sets `oauth: false`, since Toolbus authenticates by key, not OAuth.",
    "GitHub Copilot expands `$VAR`, `${VAR}` and `${VAR:-default}` in an agent's `mcp-servers` (plus `${{ secrets.VAR }}` and `${{ vars.VAR }}`), but only for names that start with `COPILOT_MCP_`, set as Agents secrets or variables for the cloud agent; rendered files prefix the variable names with it.",
    "GitHub Copilot has no LSP, skill or question tool alias; unknown names in `tools:` are ignored, so they are dropped with a warning instead. `mcp-servers` in an agent file is used by Copilot cloud agent and CLI, not by VS Code.",
  ],
};
