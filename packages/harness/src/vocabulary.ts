import { ValidationError } from "@toolbus/wire/errors";
import * as z from "zod";
import { TABLE_TOOLS, type TableTool } from "./harness-table";

/** A universal tool the table maps, or Todo (TodoWrite + TodoRead). */
export type BuiltinToolName = TableTool | "Todo";

/**
 * One tool an agent asks for, independent of any harness: a universal tool, a custom name
 * passed through to the harness verbatim, or a tool of an MCP server.
 */
export type UniversalTool =
  | { readonly kind: "builtin"; readonly name: BuiltinToolName }
  | { readonly kind: "custom"; readonly name: string }
  | { readonly kind: "mcp"; readonly server: string; readonly tool: string };

/** Names accepted for built-in tools, aliases included, in the order errors list them. */
export const TOOL_NAMES: readonly string[] = [...TABLE_TOOLS, "Todo", "Bash"];

// Custom names reach frontmatter lists (Claude Code's is comma-separated), so no separators.
const CUSTOM_NAME = /^[^\s,]{1,128}$/;
// Characters every harness keeps as they are in MCP names (Claude Code rewrites any other).
const MCP_SERVER = /^[A-Za-z0-9_-]{1,64}$/;
// The MCP specification's tool-name alphabet.
const MCP_TOOL = /^[A-Za-z0-9_.-]{1,128}$/;

function builtin<N extends BuiltinToolName>(
  name: N,
): { readonly kind: "builtin"; readonly name: N } {
  return Object.freeze({ kind: "builtin", name });
}

/**
 * The typed vocabulary for library users:
 * `tools: [Tool.Read, Tool.Shell, Tool.custom("x"), Tool.mcp("toolbus", "web_search")]`.
 */
export const Tool = {
  Read: builtin("Read"),
  Write: builtin("Write"),
  Edit: builtin("Edit"),
  Shell: builtin("Shell"),
  /** Alias of Shell. */
  Bash: builtin("Shell"),
  Glob: builtin("Glob"),
  Grep: builtin("Grep"),
  List: builtin("List"),
  LSP: builtin("LSP"),
  Skill: builtin("Skill"),
  TodoWrite: builtin("TodoWrite"),
  TodoRead: builtin("TodoRead"),
  /** TodoWrite and TodoRead. */
  Todo: builtin("Todo"),
  WebFetch: builtin("WebFetch"),
  WebSearch: builtin("WebSearch"),
  Question: builtin("Question"),
  Subagent: builtin("Subagent"),
  /** A harness tool Toolbus does not know, passed through verbatim. */
  custom(name: string): UniversalTool {
    const problem = customNameProblem(name);
    if (problem)
      throw new ValidationError(problem, { details: [{ path: "tool", message: problem }] });
    return Object.freeze({ kind: "custom", name });
  },
  /** A tool of an MCP server, named the way each harness names MCP tools. */
  mcp(server: string, tool: string): UniversalTool {
    const problem = mcpProblem(server, tool);
    if (problem)
      throw new ValidationError(problem, { details: [{ path: "tool", message: problem }] });
    return Object.freeze({ kind: "mcp", server, tool });
  },
} as const;

export type ParsedTool = { ok: true; tool: UniversalTool } | { ok: false; message: string };

/**
 * The string form HTTP callers use: a built-in name (`Read`, `Bash`, `Todo`),
 * `custom:<name>` or `mcp:<server>/<tool>`.
 */
export function parseTool(text: string): ParsedTool {
  if (text.startsWith("custom:")) {
    const name = text.slice("custom:".length);
    const problem = customNameProblem(name);
    return problem ? { ok: false, message: problem } : { ok: true, tool: Tool.custom(name) };
  }
  if (text.startsWith("mcp:")) {
    const rest = text.slice("mcp:".length);
    const slash = rest.indexOf("/");
    if (slash < 0) {
      return {
        ok: false,
        message: `MCP tools are written mcp:<server>/<tool>, not ${quote(text)}.`,
      };
    }
    const server = rest.slice(0, slash);
    const tool = rest.slice(slash + 1);
    const problem = mcpProblem(server, tool);
    return problem ? { ok: false, message: problem } : { ok: true, tool: Tool.mcp(server, tool) };
  }
  if (text === "Bash") return { ok: true, tool: Tool.Bash };
  if ((TOOL_NAMES as readonly string[]).includes(text)) {
    return { ok: true, tool: builtin(text as BuiltinToolName) };
  }
  return {
    ok: false,
    message: `Unknown tool ${quote(text)}. Use one of ${TOOL_NAMES.join(", ")}, custom:<name> or mcp:<server>/<tool>.`,
  };
}

/** Like parseTool, for library callers: a ValidationError (400 over HTTP) when it is not a tool. */
export function toolFromString(text: string): UniversalTool {
  const parsed = parseTool(text);
  if (!parsed.ok) {
    throw new ValidationError(parsed.message, {
      details: [{ path: "tool", message: parsed.message }],
    });
  }
  return parsed.tool;
}

/** The canonical string form of a tool: what parseTool reads back to the same tool. */
export function toolKey(tool: UniversalTool): string {
  switch (tool.kind) {
    case "builtin":
      return tool.name;
    case "custom":
      return `custom:${tool.name}`;
    case "mcp":
      return `mcp:${tool.server}/${tool.tool}`;
  }
}

/** The table rows a built-in tool stands for (Todo is two). */
export function expandBuiltin(name: BuiltinToolName): readonly TableTool[] {
  return name === "Todo" ? ["TodoWrite", "TodoRead"] : [name];
}

/** zod schema of one tool string on the wire; unknown names fail with the list of valid ones. */
export const universalToolString = z
  .string()
  .max(256)
  .superRefine((value, ctx) => {
    const parsed = parseTool(value);
    if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  })
  .meta({
    description: `A universal tool: ${TOOL_NAMES.join(", ")}, custom:<name> or mcp:<server>/<tool>.`,
    example: "mcp:toolbus/web_search",
  });

function customNameProblem(name: string): string | undefined {
  if (CUSTOM_NAME.test(name)) return undefined;
  return `A custom tool name is 1-128 characters without whitespace or commas, not ${quote(name)}.`;
}

function mcpProblem(server: string, tool: string): string | undefined {
  if (!MCP_SERVER.test(server)) {
    return `An MCP server name is 1-64 letters, digits, _ or -, not ${quote(server)}.`;
  }
  if (!MCP_TOOL.test(tool)) {
    return `An MCP tool name is 1-128 letters, digits, _, . or -, not ${quote(tool)}.`;
  }
  return undefined;
}

/** Echoes caller input in messages, bounded so a huge value does not become a huge error. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
