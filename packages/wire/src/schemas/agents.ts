import * as z from "zod";

/** The coding harnesses an agent file is rendered for. */
export const HARNESSES = ["claude-code", "opencode", "copilot"] as const;

/** One rendered agent file, with what was dropped or adjusted for its harness. */
export const agentFileView = z
  .object({
    harness: z.enum(HARNESSES),
    /** Where the harness reads it, relative to a project's root. */
    path: z.string(),
    content: z.string(),
    /** What was dropped or adjusted (a tool the harness lacks, ...). */
    warnings: z.array(z.string()),
    mcpServersFile: z
      .object({
        path: z.string(),
        key: z.string(),
        content: z.string(),
      })
      .optional()
      .describe(
        "The project file the harness reads the agent's MCP servers from (Claude Code's .mcp.json, OpenCode's opencode.json), when not the agent file: merge its entries under `key` into an existing file.",
      ),
  })
  .meta({ id: "AgentFile" });

/** `POST /v1/agents/render`: one file, or `{ files }` (one per harness) for `harness: "all"`. */
export const renderedAgentView = z.union([
  agentFileView,
  z.object({ files: z.array(agentFileView) }),
]);
