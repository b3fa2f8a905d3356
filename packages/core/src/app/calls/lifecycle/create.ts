import type { StageConfig } from "../../../config";
import type { CallRecord, Failure, Principal } from "../../../model/call";
import type { RunBudget } from "../../../model/run";
import type { ToolSpec } from "../../../model/tool";
import { claimDeadline } from "./deadlines";
import { failedResult } from "./results";

/**
 * How a new call starts: `direct` (a caller waits, so its handler is handed the call at once),
 * `bus` (its bus rule delivers it), `approval` (it waits for a person first).
 */
export type CallStart = "direct" | "bus" | "approval";

/** Whether the stage wants a person to approve this tool's calls by this caller. */
export function needsApproval(config: StageConfig, spec: ToolSpec, principal: Principal): boolean {
  return config.approvals.rules.some(
    (rule) =>
      (rule.roles === undefined || rule.roles.includes(principal.role)) &&
      (rule.tools?.includes(spec.id) ||
        rule.toolsets?.includes(spec.toolset) ||
        (rule.writes === true && !spec.annotations.readOnly)),
  );
}

/** How this call starts: a person first if the stage says so, else directly when a caller waits. */
export function callStart(
  config: StageConfig,
  spec: ToolSpec,
  principal: Principal,
  options: { waitSeconds: number; canDispatch: boolean },
): CallStart {
  if (needsApproval(config, spec, principal)) return "approval";
  return options.waitSeconds > 0 && options.canDispatch ? "direct" : "bus";
}

/**
 * The status a new call is recorded with. A direct call is claimed as it is created (one
 * write instead of two, and no bus delivery can take it: its rule skips direct calls); its
 * runner knows it is claimed by `dispatch: "direct"` (see `runCall`).
 */
export function initialStatus(
  start: CallStart,
  config: StageConfig,
  timeoutMs: number,
  now: Date,
): Pick<CallRecord, "status" | "dispatch" | "startedAt" | "deadlineAt" | "approval"> {
  switch (start) {
    case "direct":
      return {
        status: "running",
        dispatch: "direct",
        startedAt: now.toISOString(),
        deadlineAt: claimDeadline(now, timeoutMs),
      };
    case "approval":
      return {
        status: "awaiting_approval",
        approval: {
          requestedAt: now.toISOString(),
          expiresAt: new Date(
            now.getTime() + config.approvals.expireAfterMinutes * 60_000,
          ).toISOString(),
        },
      };
    case "bus":
      return { status: "pending" };
  }
}

/** A call its run's policy refused: recorded failed at once, never run. */
export function refusedCall(
  record: CallRecord,
  failure: Failure,
  budget: RunBudget | undefined,
  now: Date,
): CallRecord {
  const { dispatch: _, startedAt: __, deadlineAt: ___, approval: ____, ...made } = record;
  return {
    ...made,
    status: "failed",
    result: failedResult(record, failure, now),
    ...(budget ? { budget } : {}),
  };
}

/** A direct call handed back to the bus (its dispatch could not start): pending again. */
export function releasedCall(record: CallRecord): CallRecord {
  const { dispatch: _, startedAt: __, deadlineAt: ___, ...pending } = record;
  return { ...pending, status: "pending" };
}
