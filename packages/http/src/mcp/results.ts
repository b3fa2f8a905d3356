import type { CallToolResult } from "@modelcontextprotocol/server";
import { decideUrl, statusUrl } from "@toolbus/core/app/calls/status";
import type { Issue } from "@toolbus/core/errors";
import type { CallRecord } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { failureText } from "./connection-required";
import { INPUT_PROPERTY, mcpInputSchema, structuredContentOf } from "./tools";

/**
 * The `_meta` keys of every `tools/call` result. Prefixed, as MCP asks of implementation
 * metadata, so they never collide with a client's own keys.
 */
export const META = {
  runId: "toolbus/runId",
  callId: "toolbus/callId",
  /** The call's status: succeeded, failed, pending, running, or rejected (never recorded). */
  status: "toolbus/status",
  /** Where a call that is still running can be polled over REST. */
  statusUrl: "toolbus/statusUrl",
  /** A failed call's failure: kind, message, retryable, recovery, retryAfterMs. */
  failure: "toolbus/failure",
  /** Set when a fallback tool answered instead. */
  fallback: "toolbus/fallback",
  /** Why the input was rejected: one `{ path, message }` per failing path. */
  issues: "toolbus/issues",
  /** What the run has left (calls, cost, seconds), when its policy limits it. */
  budget: "toolbus/budget",
  /** A call waiting for a person: until when, and where the decision is made. */
  approval: "toolbus/approval",
} as const;

/**
 * A call as a `tools/call` result. A failed tool and a call still running when the wait ended
 * are results with `isError: true`, never protocol errors, so the model reads what happened.
 * Failures travel in `_meta`, not `structuredContent`: clients check structured content
 * against the declared output schema even on errors.
 */
export function callToolResult(
  call: CallRecord,
  spec: ToolSpec,
  /** How the agent calls it again: the tool itself, or the search surface's `call_tool`. */
  again = `Call ${spec.id} again with the same arguments`,
): CallToolResult {
  const meta: Record<string, unknown> = {
    [META.runId]: call.parentRunId,
    [META.callId]: call.callId,
    [META.status]: call.status,
    ...(call.budget ? { [META.budget]: call.budget } : {}),
  };
  const result = call.result;
  if (call.status === "succeeded" && result) {
    const structured = structuredContentOf(spec, result.data);
    return {
      // A registered MCP server's blocks go on as it sent them; other tools answer in text.
      content: result.content ?? [{ type: "text", text: result.output }],
      ...(structured ? { structuredContent: structured } : {}),
      isError: false,
      _meta: { ...meta, ...(result.fallback ? { [META.fallback]: result.fallback } : {}) },
    };
  }
  if (call.status === "failed" && result) {
    const failure = result.failure ?? Failures.internal(result.output || "The tool failed.");
    return {
      // A missing connection says where a person connects it (connection-required.ts).
      content: [{ type: "text", text: failureText(failure, again) }],
      isError: true,
      _meta: { ...meta, [META.failure]: failure },
    };
  }
  if (call.status === "awaiting_approval" && call.approval) {
    // No elicitation, no session: the same tools/call with the same call id is how the agent
    // learns the outcome, whichever server instance answers it.
    return {
      content: [
        {
          type: "text",
          text:
            `${spec.id} needs a person's approval before it runs (call ${call.callId}, until ` +
            `${call.approval.expiresAt}). It is decided at POST ${decideUrl(call)} (or /deny). ` +
            `${again} and _meta ${repeatMeta(call)} to get the outcome; ` +
            "meanwhile, go on with other work.",
        },
      ],
      isError: true,
      _meta: {
        ...meta,
        [META.statusUrl]: statusUrl(call),
        [META.approval]: { expiresAt: call.approval.expiresAt, decideUrl: decideUrl(call) },
      },
    };
  }
  // Not an isError: false result: a tool that declares an output schema must return matching
  // structured content with one, and there is none yet.
  return {
    content: [
      {
        type: "text",
        text:
          `${spec.id} is still running (call ${call.callId}, status ${call.status}). ` +
          `${again} and _meta ${repeatMeta(call)} to wait for its result, ` +
          `or poll GET ${statusUrl(call)}.`,
      },
    ],
    isError: true,
    _meta: { ...meta, [META.statusUrl]: statusUrl(call) },
  };
}

/**
 * What a client sends back to reach this same call: its run and call id. A stateless client
 * needs nothing else (no session, no header), whichever instance answers.
 */
function repeatMeta(call: CallRecord): string {
  return JSON.stringify({ [META.runId]: call.parentRunId, [META.callId]: call.callId });
}

/**
 * Input that does not match the tool's schema: a tool error the model can correct (MCP
 * 2025-11-25, SEP-1303), listing every failing path. Nothing was recorded or announced.
 */
export function invalidInputResult(
  spec: ToolSpec,
  ids: { runId: string; callId: string },
  message: string,
  issues: readonly Issue[],
  /** Where the input sits in the arguments; by default `input` under a wrapped schema. */
  inputPath = mcpInputSchema(spec.inputSchema).wrapped ? INPUT_PROPERTY : undefined,
): CallToolResult {
  // Paths are the tool's own; the model sent them under `inputPath`, if any.
  const prefix = inputPath;
  const shown = issues.map((issue) => ({
    path: prefix ? [prefix, issue.path].filter((p) => p && p !== "(input)").join(".") : issue.path,
    message: issue.message,
  }));
  const lines = shown.map((issue) => `- ${issue.path}: ${issue.message}`);
  return {
    content: [
      {
        type: "text",
        text: [message, ...lines, "Fix the arguments and call the tool again."].join("\n"),
      },
    ],
    isError: true,
    _meta: {
      [META.runId]: ids.runId,
      [META.callId]: ids.callId,
      [META.status]: "rejected",
      [META.issues]: shown,
    },
  };
}
