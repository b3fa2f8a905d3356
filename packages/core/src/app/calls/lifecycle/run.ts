import type { CallRecord } from "@toolbus/wire/model/call";
import type { ToolCallScheduled } from "@toolbus/wire/model/events";
import type { ToolPolicy } from "@toolbus/wire/model/policy";
import { type CallObservers, reportFinished } from "../../../observability/calls";
import { fallbackLogger } from "../../../observability/log";
import type { CallNotices, CallStore, EventLog, EventSink } from "../../../ports";
import { type CallerLink, callerLink } from "../../../relay/link";
import { announceFinishedCall, progressEvent } from "./announce";
import { type RunningCalls, watchCancel } from "./cancel";
import { type ProgressReport, type ReportProgress, throttleProgress } from "./progress";
import { claimDeadline, type Produced, type RunFacts, ranResult, storeResult } from "./records";

export interface RunDeps extends CallObservers {
  /** Running a call reads, claims and completes its record, and watches it for a cancel. */
  calls: Pick<CallStore, "get" | "claim" | "complete" | "cancelRequested">;
  /** The calls running in this process: a cancel made here reaches them without a read. */
  running?: RunningCalls;
  bus: EventSink;
  /** The run logs: a finished call's events are logged here, not by the recorder (announce.ts). */
  runLog?: Pick<EventLog, "append">;
  /** Where a live MCP caller waits for the call: its progress and requests go there too. */
  channel?: CallNotices;
  now?: () => Date;
}

/** How a running call reaches out: progress for the bus and its caller, and the caller itself. */
export interface CallReach {
  progress: ReportProgress;
  caller: CallerLink;
  /** Aborts when someone cancels the call: the tool is stopped and the call ends `cancelled`. */
  cancelled: AbortSignal;
}

/** What running a call needs of it; a directly dispatched call has it all in its event. */
export type RunnableCall = Pick<
  CallRecord,
  | "parentRunId"
  | "callId"
  | "toolId"
  | "toolset"
  | "input"
  | "requestedBy"
  | "scheduledAt"
  | "trace"
  | "fallbackAccess"
>;

/** How a run ended, as the tool runtime reports it (policies, cache, fallback). */
export interface RunOutcome extends Omit<RunFacts, "durationMs"> {
  execution: Produced;
}

/**
 * Longest a direct call's start waits to be announced together with its result: a faster
 * call's two events leave in one request and reach the recorder together; a slower call is
 * announced when this runs out, so subscribers still see it start.
 */
const ANNOUNCE_START_WITHIN_MS = 20;

/**
 * Runs one scheduled call, the lifecycle every handler shares. Delivery is at least once, so
 * the call is claimed first (PENDING -> RUNNING, conditional): a duplicate delivery finds it
 * claimed and runs nothing, but finishes a publish an earlier delivery was stopped before. A
 * direct call was claimed when it was made (`initialStatus`), and its start is announced here.
 * Then: run, store the result, announce it. Resolves with the finished call. What the tool
 * reports on the way is announced as ToolCallProgress (throttled, best effort), never after
 * the result.
 */
export async function runCall(
  detail: ToolCallScheduled,
  deps: RunDeps,
  policy: Pick<ToolPolicy, "timeoutMs" | "cache">,
  run: (call: RunnableCall, now: () => Date, reach: CallReach) => Promise<RunOutcome>,
): Promise<CallRecord | undefined> {
  const { calls, now = () => new Date() } = deps;
  const direct = detail.dispatch === "direct";
  const claimed = direct
    ? detail
    : await calls.claim(detail.parentRunId, detail.callId, claimDeadline(now(), policy.timeoutMs));
  if (!claimed) {
    const existing = await calls.get(detail.parentRunId, detail.callId);
    if (existing?.result && !existing.resultPublishedAt) {
      await announceFinishedCall(deps, existing, false);
    }
    return undefined;
  }
  const start = direct ? announceStartSoon(detail, deps) : undefined;
  const caller = callerLink(deps.channel, detail, (error) =>
    (deps.log ?? fallbackLogger()).warn("A message for a call's caller was lost", {
      callId: detail.callId,
      error,
    }),
  );
  const progress = progressAnnouncer(detail, deps, start, caller);
  const cancel = watchCancel(detail, deps);
  try {
    const started = performance.now();
    const { execution, ...facts } = await run(claimed, now, {
      progress: progress.report,
      caller,
      cancelled: cancel.signal,
    }).finally(() => {
      cancel.stop();
      return Promise.all([progress.close(), caller.settled()]);
    });
    const durationMs = Math.round(performance.now() - started);
    const result = ranResult(claimed, execution, { ...facts, durationMs }, now());
    const completed = await storeResult(calls, claimed, result, now(), deps.log);
    // Not running any more: a sweeper already failed it as stuck, and announced that.
    if (!completed) return undefined;
    // Counted once stored, before the caller is answered, whatever the announcing does.
    reportFinished(deps, completed, { cacheable: policy.cache !== undefined });
    const withStart = start?.cancel() === true || progress.startOwed();
    await announceFinishedCall(deps, completed, withStart);
    return completed;
  } finally {
    start?.cancel();
  }
}

/**
 * The call's progress reporter: each step numbered, throttled, published best effort. A direct
 * call's start not announced yet goes out with the first step, so no step comes before it. A
 * live caller gets every step as it comes: it asked for them, and nothing is stored for it.
 */
function progressAnnouncer(
  detail: ToolCallScheduled,
  deps: RunDeps,
  start: ReturnType<typeof announceStartSoon> | undefined,
  caller: CallerLink,
) {
  const now = deps.now ?? (() => new Date());
  let steps = 0;
  let startOwed = false;
  const throttle = throttleProgress<ProgressReport>(async (report) => {
    // A start that did not go out yet goes first, with this step or, failing that, later.
    startOwed ||= start?.cancel() === true;
    try {
      await deps.bus.publish([
        ...(startOwed ? [{ detailType: "ToolCallScheduled" as const, detail }] : []),
        progressEvent(detail, ++steps, report),
      ]);
      startOwed = false;
    } catch (error) {
      (deps.log ?? fallbackLogger()).warn("A call's progress could not be announced", {
        callId: detail.callId,
        error,
      });
    }
  });
  const report: ReportProgress = (progress, total, message) => {
    if (Number.isFinite(progress)) {
      caller.tell({
        kind: "progress",
        progress,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
      throttle.report({ progress, total, message, reportedAt: now().toISOString() });
    }
  };
  return { report, close: throttle.close, startOwed: () => startOwed };
}

/**
 * Announces a direct call's start once ANNOUNCE_START_WITHIN_MS passes. `cancel` stops it and
 * says whether it had not gone out yet (then the start goes out with the result).
 */
function announceStartSoon(detail: ToolCallScheduled, deps: RunDeps) {
  let pending = true;
  const timer = setTimeout(() => {
    pending = false;
    deps.bus.publish([{ detailType: "ToolCallScheduled", detail }]).catch((error: unknown) => {
      // The result's announcement (or, failing that, the sweeper) carries it later.
      (deps.log ?? fallbackLogger()).warn("A call's start could not be announced", {
        callId: detail.callId,
        error,
      });
    });
  }, ANNOUNCE_START_WITHIN_MS);
  return {
    cancel(): boolean {
      clearTimeout(timer);
      const wasPending = pending;
      pending = false;
      return wasPending;
    },
  };
}
