import type { CallRecord, CallResult, Failure, Principal } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { RunBudget } from "@toolbus/wire/model/run";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../../config";
import { ToolbusError } from "../../../errors";
import { fallbackLogger, type Logger } from "../../../observability/log";
import type { CallStore } from "../../../ports";

/*
 * A call record's states and what each holds: how a call starts, its deadlines, its result
 * (one builder of a failed one) and how the result is stored. Run, announce, decide and
 * sweep (the other modules here) move a record between these states.
 */

// ---- Deadlines ----------------------------------------------------------------------------

/** Grace past the tool's own timeout before a RUNNING call counts as stuck. */
const DEADLINE_GRACE_MS = 30_000;

/** When a call claimed now counts as stuck (its handler died): whoever claims uses this. */
export function claimDeadline(now: Date, timeoutMs: number): string {
  return new Date(now.getTime() + timeoutMs + DEADLINE_GRACE_MS).toISOString();
}

/** Strictly after scheduledAt, so a run's log (ordered by time) never shows a result first. */
export function completionTime(scheduledAt: string, now: Date): string {
  const floor = Date.parse(scheduledAt) + 1;
  return new Date(Math.max(now.getTime(), floor)).toISOString();
}

// ---- How a call starts --------------------------------------------------------------------

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

// ---- Results ------------------------------------------------------------------------------

/** What a result's size counts: the body a caller reads back. */
type ResultBody = Pick<CallResult, "output" | "data" | "citations" | "content">;

/**
 * The result's size as UTF-8 JSON of its body, or undefined when it cannot be written as JSON
 * at all (nested deeper than JSON.stringify's stack allows: an upstream's hostile output).
 * The one rule for `resultBytes`, whoever builds the result.
 */
export function resultSize(body: ResultBody): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(body) ?? "");
  } catch {
    return undefined;
  }
}

/** What a tool's run produced, before it is a stored result. */
export type Produced =
  | {
      ok: true;
      output: string;
      data: unknown;
      citations: CallResult["citations"];
      content?: CallResult["content"];
    }
  | { ok: false; failure: Failure };

export interface RunFacts {
  cached: boolean;
  stale: boolean;
  fallback?: CallResult["fallback"];
  durationMs: number;
}

/**
 * The result of a call its tool ran. An output that cannot be stored as JSON fails the call
 * as `invalid_output` instead.
 */
export function ranResult(
  call: Pick<CallRecord, "scheduledAt">,
  produced: Produced,
  facts: RunFacts,
  now: Date,
): CallResult {
  if (!produced.ok) return failedResult(call, produced.failure, now, facts);
  const body = {
    output: produced.output,
    data: produced.data,
    citations: produced.citations,
    ...(produced.content ? { content: produced.content } : {}),
  };
  const bytes = resultSize(body);
  if (bytes === undefined) return unstorableResult(call, "it is nested too deeply", now, facts);
  return {
    status: "succeeded",
    ...body,
    ...runFields(facts),
    resultBytes: bytes,
    truncated: false,
    completedAt: completionTime(call.scheduledAt, now),
  };
}

/**
 * The one builder of a failed result: a tool's failure, a refusal (its run's policy, a
 * person, an expired approval), a stuck or never-run call, an output that cannot be stored.
 * The output is the failure's message; nothing else is kept.
 */
export function failedResult(
  call: Pick<CallRecord, "scheduledAt">,
  failure: Failure,
  now: Date,
  facts: Partial<RunFacts> = {},
  options: { truncated?: boolean } = {},
): CallResult {
  const body = { output: failure.message, data: null, citations: [] };
  return {
    status: "failed",
    ...body,
    failure,
    ...runFields({ cached: false, stale: false, durationMs: 0, ...facts }),
    resultBytes: resultSize(body) ?? 0,
    truncated: options.truncated ?? false,
    completedAt: completionTime(call.scheduledAt, now),
  };
}

/** A result whose output the store (or JSON) cannot take: failed as `invalid_output`. */
function unstorableResult(
  call: Pick<CallRecord, "scheduledAt">,
  why: string,
  now: Date,
  facts: Partial<RunFacts> = {},
): CallResult {
  const failure = Failures.invalidOutput(`The tool's output could not be stored: ${why}.`);
  return failedResult(call, failure, now, facts, { truncated: true });
}

function runFields(facts: RunFacts) {
  return {
    cached: facts.cached,
    stale: facts.stale,
    ...(facts.fallback ? { fallback: facts.fallback } : {}),
    durationMs: facts.durationMs,
  };
}

// ---- Storing a result ---------------------------------------------------------------------

/**
 * Stores a finished call's result (RUNNING -> SUCCEEDED/FAILED). The store already shrinks
 * results that are too large; what it still refuses (an item DynamoDB will not take, a value
 * it cannot encode) is the output's fault, so the call is stored failed with `invalid_output`
 * instead. An outage is not: it is thrown, and the delivery is retried. Undefined when the
 * call was no longer running (the sweeper failed it as stuck).
 */
export async function storeResult(
  calls: Pick<CallStore, "complete">,
  call: Pick<CallRecord, "parentRunId" | "callId" | "scheduledAt">,
  result: CallResult,
  now: Date,
  log: Logger = fallbackLogger(),
): Promise<CallRecord | undefined> {
  try {
    return await calls.complete(call.parentRunId, call.callId, result);
  } catch (error) {
    if (error instanceof ToolbusError && error.status >= 500) throw error;
    if (result.failure?.kind === "invalid_output" && result.data === null) throw error;
    log.warn("A tool's result could not be stored; the call fails as invalid_output", {
      callId: call.callId,
      error,
    });
    const why = error instanceof RangeError ? "it is nested too deeply" : "the store refused it";
    const facts = { cached: result.cached, stale: result.stale, durationMs: result.durationMs };
    return calls.complete(call.parentRunId, call.callId, unstorableResult(call, why, now, facts));
  }
}
