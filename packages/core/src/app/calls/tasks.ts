import type { CallRecord } from "@toolbus/wire/model/call";
import type { TaskSupport, ToolSpec } from "@toolbus/wire/model/tool";

/**
 * MCP tasks are Toolbus calls: a task's id names its call (run and call id), it exists as soon
 * as the call is recorded, and its status, result and failure are the call record's. This is
 * the one mapping; both MCP generations (2025-11-25's tasks, 2026-07-28's tasks extension)
 * answer from it.
 */

const TASK_ID_PREFIX = "toolbus.task.";

/** A call's task id: opaque to callers, and decoded only to a run and call they may read. */
export function taskIdOf(call: Pick<CallRecord, "parentRunId" | "callId">): string {
  return `${TASK_ID_PREFIX}${Buffer.from(JSON.stringify([call.parentRunId, call.callId])).toString("base64url")}`;
}

/** The run and call a task id names; undefined for anything that is not one of ours. */
export function callOfTaskId(taskId: string): { runId: string; callId: string } | undefined {
  if (!taskId.startsWith(TASK_ID_PREFIX) || taskId.length > 1024) return undefined;
  try {
    const named: unknown = JSON.parse(
      Buffer.from(taskId.slice(TASK_ID_PREFIX.length), "base64url").toString("utf8"),
    );
    if (
      Array.isArray(named) &&
      named.length === 2 &&
      typeof named[0] === "string" &&
      typeof named[1] === "string"
    ) {
      return { runId: named[0], callId: named[1] };
    }
  } catch {
    // Not JSON: not a task id of ours.
  }
  return undefined;
}

/** MCP's task statuses. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/**
 * A call's task status. A call not finished is `working` (also while it waits for a person's
 * approval; `input_required` is for requests its caller must answer, which the MCP surface
 * knows of); a cancelled one `cancelled`; otherwise `completed` or `failed` as it ended.
 */
export function taskStatusOf(call: Pick<CallRecord, "status" | "result">): TaskStatus {
  if (call.status === "succeeded") return "completed";
  if (call.status !== "failed") return "working";
  return call.result?.failure?.kind === "cancelled" ? "cancelled" : "failed";
}

/**
 * The longest one MCP request can be held open (the API's streaming function runs 15 minutes
 * on AWS): a tool that may run longer can only be run as a task.
 */
export const LONGEST_REQUEST_MS = 900_000;

/**
 * Whether a tool may, must or may not run as a task. Its own `taskSupport` when it says;
 * otherwise `required` when its timeout is longer than one request can be held, and
 * `optional` for the rest: every call is recorded durably, so any tool can run as a task,
 * and a caller that does not use tasks keeps calling it as before.
 */
export function taskSupportOf(spec: Pick<ToolSpec, "taskSupport" | "timeoutMs">): TaskSupport {
  if (spec.taskSupport) return spec.taskSupport;
  return spec.timeoutMs > LONGEST_REQUEST_MS ? "required" : "optional";
}
