import type { CallRecord } from "@toolbus/wire/model/call";
import type { ToolCallScheduled } from "@toolbus/wire/model/events";
import type { ToolPolicy } from "@toolbus/wire/model/policy";
import { type CallObservers, reportFinished } from "../../../observability/calls";
import { fallbackLogger } from "../../../observability/log";
import type { CallNotices, CallStore, EventLog, EventSink, OutgoingEvent } from "../../../ports";
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
  /**
   * Where the process outlives its answers (`npm start`, tests): takes over announcing a
   * stored call dispatched directly, so its waiting caller is answered without waiting for
   * the bus and the log (compose/late-announcements.ts). Absent (a Lambda function, frozen once it answers), the
   * call is announced before it is answered.
   */
  announceLater?: (call: CallRecord, announce: () => Promise<void>) => void;
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
 * Progress steps a finishing call logs with its result: the throttle lets out at most two a
 * second, so three cover the last second and a half, more than a bus delivery takes.
 */
const LATE_STEPS = 3;

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
    // Whether the start is still owed is asked when announcing: a start the bus is still taking
    // (a call slower than ANNOUNCE_START_WITHIN_MS) is waited for there, not by the caller.
    const announce = async () => {
      const withStart = (await start?.take()) === true || progress.startOwed();
      await announceFinishedCall(deps, completed, withStart, progress.lately());
    };
    // Only a caller waiting for a direct dispatch gains by it; the bus waits for the whole run.
    if (direct && deps.announceLater) deps.announceLater(completed, announce);
    else await announce();
    return completed;
  } finally {
    start?.stop();
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
  // The steps announced last: they reach the recorder a bus delivery later, after this call's
  // own append has logged its result (and no step is logged after it), so they go with it.
  const lately: OutgoingEvent[] = [];
  const throttle = throttleProgress<ProgressReport>(async (report) => {
    // A start that did not go out yet goes first, with this step or, failing that, later.
    startOwed ||= (await start?.take()) === true;
    try {
      const step = progressEvent(detail, ++steps, report);
      await deps.bus.publish([
        ...(startOwed ? [{ detailType: "ToolCallScheduled" as const, detail }] : []),
        step,
      ]);
      startOwed = false;
      lately.push(step);
      if (lately.length > LATE_STEPS) lately.shift();
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
  return { report, close: throttle.close, startOwed: () => startOwed, lately: () => [...lately] };
}

/**
 * Announces a direct call's start once ANNOUNCE_START_WITHIN_MS passes. `take` stops it and
 * resolves whether the start is still owed: not sent yet, or sent and refused by the bus (it
 * then goes out with the next step or the result, so it is never logged without having been
 * announced). Owed once: a later `take` resolves false.
 */
function announceStartSoon(detail: ToolCallScheduled, deps: RunDeps) {
  let state: "waiting" | "taken" | Promise<boolean> = "waiting";
  const timer = setTimeout(() => {
    state = deps.bus.publish([{ detailType: "ToolCallScheduled", detail }]).then(
      () => true,
      (error: unknown) => {
        (deps.log ?? fallbackLogger()).warn("A call's start could not be announced", {
          callId: detail.callId,
          error,
        });
        return false;
      },
    );
  }, ANNOUNCE_START_WITHIN_MS);
  return {
    async take(): Promise<boolean> {
      clearTimeout(timer);
      const now = state;
      state = "taken";
      if (now === "waiting") return true;
      if (now === "taken") return false;
      return !(await now);
    },
    stop(): void {
      clearTimeout(timer);
    },
  };
}
