import { type CallRecord, type CallResult, MAX_PROGRESS_MESSAGE } from "@toolbus/wire/model/call";
import {
  approvalEventKey,
  occurredAtOf,
  progressEventKey,
  type RunEvent,
  resultEventKey,
  scheduledEventKey,
  type ToolCallProgress,
  type ToolCallScheduled,
  type ToolResultReceived,
} from "@toolbus/wire/model/events";
import { fitResultEvent } from "../../../events/size";
import { fallbackLogger, type Logger } from "../../../observability/log";
import type { EventLog, EventSink, OutgoingEvent } from "../../../ports";
import { EVENT_SOURCE } from "../../../wiring";
import { decideUrl } from "../status";
import type { ProgressReport } from "./progress";

/*
 * Every event a call announces, built from the call record, whoever announces it (the API,
 * a tool's handler, a person's decision, the sweeper). The same call gives the same event
 * keys, so announcing again is always safe: consumers keep one.
 */

/** ToolCallScheduled as a handler receives it, from the bus or from a direct dispatch. */
export interface ScheduledEnvelope {
  source: typeof EVENT_SOURCE;
  "detail-type": "ToolCallScheduled";
  time: string;
  detail: ToolCallScheduled;
}

export function scheduledEnvelope(detail: ToolCallScheduled): ScheduledEnvelope {
  return {
    source: EVENT_SOURCE,
    "detail-type": "ToolCallScheduled",
    time: detail.scheduledAt,
    detail,
  };
}

/** The ToolCallScheduled detail of a recorded call: the same fields whoever announces it. */
export function scheduledDetail(call: CallRecord): ToolCallScheduled & { [key: string]: unknown } {
  return {
    eventKey: scheduledEventKey(call.parentRunId, call.callId),
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    ...(call.implementation ? { implementation: call.implementation } : {}),
    input: call.input,
    requestedBy: call.requestedBy,
    scheduledAt: call.scheduledAt,
    ...(call.mode ? { mode: call.mode } : {}),
    ...(call.parentCallId ? { parentCallId: call.parentCallId } : {}),
    ...(call.dispatch ? { dispatch: call.dispatch } : {}),
    ...(call.trace ? { trace: call.trace } : {}),
    ...(call.fallbackAccess ? { fallbackAccess: call.fallbackAccess } : {}),
  };
}

/** Who writes an event to its run's log: `direct`, its announcer; absent, the recorder. */
type LoggedBy = "direct" | undefined;

function scheduledEvent(call: CallRecord, log?: LoggedBy): OutgoingEvent {
  return {
    detailType: "ToolCallScheduled",
    detail: { ...scheduledDetail(call), ...(log ? { log } : {}) },
  };
}

/** ToolResultReceived of a stored result; too large for an event, it carries a preview. */
function resultEvent(call: CallRecord, result: CallResult, log?: LoggedBy): OutgoingEvent {
  const detail: ToolResultReceived = fitResultEvent({
    ...result,
    eventKey: resultEventKey(call.parentRunId, call.callId),
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    resultOmitted: false,
    ...(call.trace ? { trace: call.trace } : {}),
    ...(call.budget ? { budget: call.budget } : {}),
    ...(log ? { log } : {}),
  });
  return { detailType: "ToolResultReceived", detail };
}

/** A call's scheduling as its run's log keeps it, rebuilt from the record. */
export function scheduledEntry(call: CallRecord): RunEvent {
  return runEntry(scheduledEvent(call), call.scheduledAt);
}

/** An announced event as its run's log keeps it. */
function runEntry(event: OutgoingEvent, time: string): RunEvent {
  return {
    eventKey: event.detail.eventKey,
    detailType: event.detailType as RunEvent["detailType"],
    occurredAt: occurredAtOf(event.detail, time),
    detail: event.detail,
  };
}

/** What announcing a finished call and logging it needs. */
export interface FinishAnnouncer {
  bus: EventSink;
  /**
   * The run logs, where this process may append to them: the events are then logged here, at
   * once, instead of by the recorder a bus delivery later.
   */
  runLog?: Pick<EventLog, "append"> | undefined;
  log?: Logger | undefined;
}

/**
 * Announces a finished call: its result, and its start too when that did not go out yet
 * (`withStart`). With a run log at hand the announcer logs both itself, so a reader finds them
 * the moment the caller has its answer, and the recorder is not invoked at all: the events go
 * on the bus marked `log: "direct"`, which its rule skips. The bus first, the log second:
 * logging the result is what takes the call off the outbox, so a call that is logged has been
 * announced. If the log cannot be written, the events go on the bus again unmarked, for the
 * recorder; if the process stops in between, the call stays on the outbox and the sweeper
 * announces it again. The event keys are the same, so every consumer keeps one of each.
 */
export async function announceFinishedCall(
  deps: FinishAnnouncer,
  call: CallRecord,
  withStart = true,
  /** Progress steps announced last, logged before the result if the log lacks them. */
  progress: readonly OutgoingEvent[] = [],
): Promise<void> {
  const result = call.result;
  if (!result) return announceScheduled(deps.bus, call);
  const log: LoggedBy = deps.runLog ? "direct" : undefined;
  const start = withStart ? scheduledEvent(call, log) : undefined;
  const end = resultEvent(call, result, log);
  await deps.bus.publish(start ? [start, end] : [end]);
  if (!deps.runLog) return;
  // In the log's order: the start (one announced earlier went to the recorder, but the log
  // keeps one of each and never a result before its call's start), the last steps, the result.
  const at = result.completedAt;
  const entries = [
    start ? runEntry(start, at) : scheduledEntry(call),
    ...progress.map((step) => runEntry(step, at)),
    runEntry(end, at),
  ];
  try {
    // Nobody else was told of a call announced whole here, with no step before: this process
    // is the only one that logs its events.
    const alone = start !== undefined && progress.length === 0;
    await deps.runLog.append(call, entries, { finisher: alone ? "alone" : "after-others" });
  } catch (error) {
    // Left to the recorder, whose deliveries the bus retries: the same events, unmarked (the
    // same keys, so every consumer keeps one). Failing that, the sweeper announces them.
    const log = deps.log ?? fallbackLogger();
    log.warn("A finished call's events could not be logged here: left to the recorder", {
      callId: call.callId,
      error,
    });
    await announceFinishedCall({ bus: deps.bus }, call, withStart).catch((again: unknown) =>
      log.warn("A finished call's events are left to the sweeper", {
        callId: call.callId,
        error: again,
      }),
    );
  }
}

/** Announces a recorded call: first when it is made, again by a retry or the sweeper. */
export async function announceScheduled(bus: EventSink, call: CallRecord): Promise<void> {
  await bus.publish([scheduledEvent(call)]);
}

/**
 * Both events of a finished call in one request, for the recorder to log: a call that finished
 * without running (a decision, the sweeper) or one whose start was not announced yet.
 */
export async function announceFinished(bus: EventSink, call: CallRecord): Promise<void> {
  await announceFinishedCall({ bus }, call);
}

/** Tells subscribers (and chat bots) that a call waits for a person: ToolCallApprovalRequested. */
export async function announceApprovalRequested(bus: EventSink, call: CallRecord): Promise<void> {
  if (!call.approval) return;
  await bus.publish([
    {
      detailType: "ToolCallApprovalRequested",
      detail: {
        ...scheduledDetail(call),
        eventKey: approvalEventKey(call.parentRunId, call.callId),
        approval: { expiresAt: call.approval.expiresAt, decideUrl: decideUrl(call) },
      },
    },
  ]);
}

/**
 * ToolCallProgress of a running call's step: keyed by the step's number in the call, so the
 * same step announced again is logged once, and a later step supersedes it.
 */
export function progressEvent(
  call: Pick<CallRecord, "parentRunId" | "callId" | "toolId" | "toolset" | "trace">,
  step: number,
  report: ProgressReport,
): OutgoingEvent {
  const detail: ToolCallProgress = {
    eventKey: progressEventKey(call.parentRunId, call.callId, step),
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    progress: report.progress,
    ...(Number.isFinite(report.total) ? { total: report.total } : {}),
    ...(typeof report.message === "string" && report.message
      ? { message: report.message.slice(0, MAX_PROGRESS_MESSAGE) }
      : {}),
    reportedAt: report.reportedAt,
    ...(call.trace ? { trace: call.trace } : {}),
  };
  return { detailType: "ToolCallProgress", detail };
}
