/**
 * The harness facts, as data: which native tools each universal tool becomes on each coding
 * harness, how each names MCP tools and where it reads agent files. Everything that renders
 * agent files or the README table reads this one object, so a vendor renaming a tool is a
 * one-line change here (and a failing test until the expectations agree).
 *
 * Checked against each vendor's documentation on `verifiedOn`; `sources` names the pages.
 */

export const HARNESSES = ["claude-code", "opencode", "copilot"] as const;
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
  /** Whether an agent file can carry MCP server configuration itself. */
  mcpServersInAgentFile: boolean;
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
  /** Where the vendors' current documentation differs from DESIGN.md, and other caveats. */
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
    ],
    opencode: [
      { title: "OpenCode agents", url: "https://opencode.ai/docs/agents/" },
      { title: "OpenCode tools", url: "https://opencode.ai/docs/tools/" },
      { title: "OpenCode permissions", url: "https://opencode.ai/docs/permissions/" },
      { title: "OpenCode: migrate from V1", url: "https://opencode.ai/docs/migrate-v1/" },
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
    ],
  },
  harnesses: {
    "claude-code": {
      title: "Claude Code",
      agentPath: ".claude/agents/<name>.md",
      mcpToolName: "mcp__{server}__{tool}",
      mcpServersInAgentFile: true,
    },
    opencode: {
      title: "OpenCode",
      agentPath: ".opencode/agents/<name>.md",
      mcpToolName: "{server}_{tool}",
      mcpServersInAgentFile: false,
    },
    copilot: {
      title: "GitHub Copilot",
      agentPath: ".github/agents/<name>.agent.md",
      mcpToolName: "{server}/{tool}",
      mcpServersInAgentFile: true,
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
    "OpenCode now documents project agents in `.opencode/agents/` (plural); the singular `.opencode/agent/` that DESIGN.md names is still read for backwards compatibility.",
    "OpenCode's `tools:` boolean map is deprecated since v1.1.1 in favour of `permission:`; `write` is governed by the `edit` permission key.",
    "OpenCode's tools page no longer lists `list` or `todoread` as tools, but its permissions page still has `list`, `todoread` and `todowrite` keys; the table keeps both names.",
    "OpenCode 2 reads V1 agent files and normalizes V1 permission keys (`bash`, `task`) to its own (`shell`, `subagent`); rendered files use the V1 keys both versions accept.",
    "Claude Code's interactive sessions use TaskCreate, TaskGet, TaskList and TaskUpdate; TodoWrite remains only in non-interactive mode and the Agent SDK. Claude Code has no separate list tool, so List maps to Glob.",
    "Claude Code rewrites characters outside A-Z a-z 0-9 _ - in an MCP server name to `_`; Toolbus only accepts server names made of those characters.",
    "GitHub Copilot has no LSP, skill or question tool alias; unknown names in `tools:` are ignored, so they are dropped with a warning instead. `mcp-servers` in an agent file is used by Copilot cloud agent and CLI, not by VS Code.",
  ],
};
