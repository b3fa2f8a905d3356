import type { CallRecord } from "@toolbus/wire/model/call";
import { type ToolCallScheduled, toolCallScheduled } from "@toolbus/wire/model/events";
import { type RunDeps, runCall } from "../app/calls/lifecycle";
import { ValidationError, zodIssues } from "../errors";
import { type AnyToolDefinition, toolPolicyOf } from "../tool-definition";
import { runWithPolicies, type ToolRunDeps } from "./policies";

/** What a tool's handler runs a call with: the lifecycle's needs and the policies'. */
export interface ToolRuntimeDeps extends RunDeps, ToolRunDeps {}

/**
 * Turns a tool into its bus handler: parse the event, then the call lifecycle runs it
 * (claim, run under the tool's policies, store, announce). Resolves with the finished call.
 */
export function createToolHandler(
  tool: AnyToolDefinition,
  deps: () => ToolRuntimeDeps | Promise<ToolRuntimeDeps>,
) {
  return async (event: unknown): Promise<CallRecord | undefined> => {
    const runtime = await deps();
    const detail = parseScheduled(event, tool.spec.id);
    return runCall(detail, runtime, toolPolicyOf(tool), (claimed, now, reach) =>
      runWithPolicies(tool, claimed, { ...runtime, now, ...reach }),
    );
  };
}

/** The ToolCallScheduled detail of a bus event; with `expectedTool`, it must be for that tool. */
export function parseScheduled(event: unknown, expectedTool?: string): ToolCallScheduled {
  const envelope = event as { "detail-type"?: unknown; detail?: unknown } | null;
  if (envelope?.["detail-type"] !== "ToolCallScheduled") {
    throw new ValidationError("Expected a ToolCallScheduled event.");
  }
  const parsed = toolCallScheduled.safeParse(envelope.detail);
  if (!parsed.success) {
    throw new ValidationError("The ToolCallScheduled detail is not valid.", {
      details: zodIssues(parsed.error.issues, "(detail)"),
    });
  }
  if (expectedTool !== undefined && parsed.data.toolId !== expectedTool) {
    // A rule pointing at the wrong handler: fail loudly so the event is dead-lettered.
    throw new ValidationError(`This handler runs ${expectedTool}, not ${parsed.data.toolId}.`);
  }
  return parsed.data;
}
