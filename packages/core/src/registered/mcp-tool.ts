import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { contentBlock, describeContent } from "@toolbus/wire/model/content";
import { Failures } from "@toolbus/wire/model/failure";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
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
        context.progress,
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
  if (result.isError) {
    throw new ToolFailure(
      Failures.upstreamError(
        `${upstream} reported an error from ${toolId}: ${text || "no details"}`.slice(0, 1000),
        { retryable: false, recovery: "correct_call" },
      ),
    );
  }
  const data = result.structuredContent ?? null;
  return {
    output: textForModel(text || (data === null ? "" : JSON.stringify(data, null, 2))),
    data,
    content: content.data,
  };
}

const contentBlocks = z.array(contentBlock);
