import type { CallToolResult } from "@modelcontextprotocol/client";
import { MAX_RESULT_BYTES } from "@toolbus/wire/model/call";
import { type ContentBlock, contentBlock, describeContent } from "@toolbus/wire/model/content";
import { Failures } from "@toolbus/wire/model/failure";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
import { resultSize } from "../app/calls/lifecycle/records";
import { type AnyToolDefinition, ToolFailure } from "../tool-definition";
import { callRemoteTool, mcpConnection } from "./mcp-client";
import { jsonSchemaType, textForModel } from "./schema-type";

/** A tool of a registered MCP server as a tool definition, run by the generic mcp handler. */
export function mcpToolDefinition(spec: ToolSpec): AnyToolDefinition {
  const implementation = spec.implementation;
  if (implementation.kind !== "mcp") throw new Error(`${spec.id} is not an mcp tool.`);
  return {
    spec,
    catalogSpec: spec,
    input: jsonSchemaType(spec.inputSchema),
    output: jsonSchemaType(spec.outputSchema),
    async execute(input, context) {
      const upstream = `${spec.toolset} (${new URL(implementation.url).host})`;
      const result = await callRemoteTool(
        mcpConnection(
          implementation,
          { secret: context.secret, http: context.http },
          { owner: spec.id, upstream, timeoutMs: spec.timeoutMs, signal: context.signal },
        ),
        implementation.remoteName,
        input,
        {
          protocols: implementation.protocols,
          caller: context.caller,
          onProgress: context.progress,
          asTask: implementation.remoteTaskRequired === true,
        },
      );
      return outcomeOf(result, spec.id, upstream);
    },
  };
}

/**
 * A remote result in Toolbus's terms: `isError` is a failed result (the server's own words,
 * for the agent to act on). Otherwise the content blocks are kept as the server sent them
 * (images stay images), the structured content is `data`, and `output` is what a model that
 * reads only text learns of the blocks.
 */
function outcomeOf(result: CallToolResult, toolId: string, upstream: string) {
  if (result.isError) {
    // The server's own words, whatever else its blocks hold.
    const words = result.content
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("\n")
      .trim();
    throw new ToolFailure(
      Failures.upstreamError(
        `${upstream} reported an error from ${toolId}: ${words || "no details"}`.slice(0, 1000),
        { retryable: false, recovery: "correct_call" },
      ),
    );
  }
  const content = contentBlocks.safeParse(result.content);
  if (!content.success) {
    const issue = content.error.issues[0];
    throw new ToolFailure(
      Failures.invalidOutput(
        `${upstream} answered ${toolId} with content that is not MCP content (at content.${issue?.path.join(".")}: ${issue?.message}).`,
      ),
    );
  }
  const text = content.data.map(describeContent).join("\n").trim();
  const data = result.structuredContent ?? null;
  const output = textForModel(text || (data === null ? "" : JSON.stringify(data, null, 2)));
  // Sized by the one rule for a result's bytes, as the call will store it.
  const bytes = resultSize({ output, data, citations: [], content: content.data }) ?? Infinity;
  if (bytes <= MAX_RESULT_BYTES) return { output, data, content: content.data };
  // Text alone is in `output` too, which may be cut with a note; an image or a file cut short
  // is no image or file at all, so a result holding one fails, naming its size.
  if (content.data.every((block) => block.type === "text")) return { output, data };
  throw new ToolFailure(
    Failures.invalidOutput(
      `The tool's output could not be stored: its ${bytes} bytes (${contentSummary(content.data)}) are over the ${MAX_RESULT_BYTES} bytes a call's result may hold.`,
    ),
  );
}

/** What content blocks a result holds, by kind: "2 image, 1 text". */
function contentSummary(content: readonly ContentBlock[]): string {
  const counts = new Map<string, number>();
  for (const block of content) counts.set(block.type, (counts.get(block.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => `${count} ${type}`).join(", ");
}

const contentBlocks = z.array(contentBlock);
