import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type { SearchService } from "@toolbus/core/app/search/service";
import { zodIssues } from "@toolbus/core/errors";
import { CALL_TOOL, SEARCH_TOOLS } from "@toolbus/wire/mcp-surface";
import type { Principal } from "@toolbus/wire/model/call";
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  searchLimit,
  searchQuery,
} from "@toolbus/wire/schemas/search";
import * as z from "zod";
import { META } from "./results";

const foundToolJsonSchema = {
  type: "object",
  properties: {
    id: { type: "string", description: "The name to give call_tool." },
    title: { type: "string" },
    description: { type: "string" },
    usageHint: { type: "string", description: "When to use it." },
    inputSchema: { type: "object", description: "JSON Schema of call_tool's arguments." },
    score: { type: "number" },
    explanation: {
      type: "object",
      description: "With explain: the query's words it matched, where, and notes.",
    },
  },
  required: ["id", "title", "description", "usageHint", "inputSchema", "score"],
} as const;

/** The search surface's `tools/list`: the same two tools, byte for byte, on every stage. */
export const SEARCH_SURFACE_TOOLS: Tool[] = [
  {
    name: SEARCH_TOOLS,
    title: "Search tools",
    description:
      "Find tools for what you need to do. Describe the need in a few words; you get the best " +
      "matches with their id, what they do, when to use them and the JSON Schema of their " +
      `input. Then run one with ${CALL_TOOL}. Tools are optional: if nothing fits, carry on.`,
    inputSchema: {
      type: "object",
      properties: {
        query: {
          type: "string",
          minLength: 1,
          maxLength: MAX_QUERY_CHARS,
          description: "The need, in words, e.g. 'weather forecast for a city'.",
        },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MAX_SEARCH_LIMIT,
          description: `How many tools at most (default ${DEFAULT_SEARCH_LIMIT}).`,
        },
        explain: {
          type: "boolean",
          description:
            "Say why each tool was found; an administrator also gets matching tools left out, and why.",
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        tools: { type: "array", items: foundToolJsonSchema },
        excluded: {
          type: "array",
          description: "With explain, for administrators: matching tools left out, and why.",
          items: { type: "object" },
        },
      },
      required: ["tools"],
    },
    annotations: { title: "Search tools", readOnlyHint: true, openWorldHint: false },
  },
  {
    name: CALL_TOOL,
    title: "Call a tool",
    description:
      `Run a tool that ${SEARCH_TOOLS} found: its id and its input as its inputSchema ` +
      "describes. Returns what the tool returned.",
    inputSchema: {
      type: "object",
      properties: {
        tool: { type: "string", description: `A tool id from ${SEARCH_TOOLS}.` },
        arguments: { description: "The tool's input, as its inputSchema describes." },
      },
      required: ["tool"],
      additionalProperties: false,
    },
    // What a call does depends on the tool called: nothing can be promised for all of them.
    annotations: { title: "Call a tool", readOnlyHint: false, openWorldHint: true },
  },
];

const searchArguments = z.strictObject({
  query: searchQuery,
  limit: searchLimit.optional(),
  explain: z.boolean().optional(),
});
const callArguments = z.strictObject({
  tool: z.string().min(1).max(64),
  arguments: z.unknown().optional(),
});

/** `search_tools`: the same ranked, selection-scoped search as `GET /v1/tools/search`. */
export async function searchToolsResult(
  search: SearchService,
  // Who asks and in which mode; the rest of the request's context is the server's.
  context: { principal: Principal; mode: string },
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const parsed = searchArguments.safeParse(args ?? {});
  if (!parsed.success) return refusal(SEARCH_TOOLS, parsed.error, searchArguments);
  const found = await search.search(context.principal, {
    query: parsed.data.query,
    limit: parsed.data.limit,
    mode: context.mode,
    ...(parsed.data.explain ? { explain: true } : {}),
  });
  const tools = found.tools.map(
    ({ id, title, description, usageHint, inputSchema, score, explanation }) => ({
      id,
      title,
      description,
      usageHint,
      inputSchema,
      score,
      ...(explanation ? { explanation } : {}),
    }),
  );
  // With explain, an administrator also hears of the matching tools selection left out.
  const structured = found.excluded ? { tools, excluded: found.excluded } : { tools };
  const text =
    tools.length > 0 || found.excluded?.length
      ? JSON.stringify(structured)
      : "No tool you can call matches that. Try other words, or carry on without a tool.";
  return { content: [{ type: "text", text }], structuredContent: structured, isError: false };
}

/** `call_tool`'s target and the tool's own input, or the result that says what is wrong. */
export function callToolArguments(
  args: Record<string, unknown> | undefined,
): { tool: string; input: unknown } | { refused: CallToolResult } {
  const parsed = callArguments.safeParse(args ?? {});
  if (!parsed.success) return { refused: refusal(CALL_TOOL, parsed.error, callArguments) };
  // Absent: no input, as for a tool without parameters. `null` is passed on as it is.
  const input = parsed.data.arguments === undefined ? {} : parsed.data.arguments;
  return { tool: parsed.data.tool, input };
}

/** Arguments that do not fit: a tool error the model can correct, each failing path named. */
function refusal(name: string, error: z.ZodError, schema: z.ZodType): CallToolResult {
  const issues = zodIssues(error.issues, "(arguments)", schema);
  return {
    content: [
      {
        type: "text",
        text: [
          `Invalid arguments for ${name}:`,
          ...issues.map((issue) => `- ${issue.path}: ${issue.message}`),
        ].join("\n"),
      },
    ],
    isError: true,
    _meta: { [META.issues]: issues },
  };
}
