import { type CallRecord, type CallResult, MAX_PROGRESS_MESSAGE } from "@toolbus/wire/model/call";
import {
  approvalEventKey,
  progressEventKey,
  resultEventKey,
  scheduledEventKey,
  type ToolCallProgress,
  type ToolCallScheduled,
  type ToolResultReceived,
} from "@toolbus/wire/model/events";
import { fitResultEvent } from "../../../events/size";
import type { EventSink, OutgoingEvent } from "../../../ports";
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

function scheduledEvent(call: CallRecord): OutgoingEvent {
  return { detailType: "ToolCallScheduled", detail: scheduledDetail(call) };
}

/** ToolResultReceived of a stored result; too large for an event, it carries a preview. */
function resultEvent(call: CallRecord, result: CallResult): OutgoingEvent {
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
  });
  return { detailType: "ToolResultReceived", detail };
}

/** Announces a recorded call: first when it is made, again by a retry or the sweeper. */
export async function announceScheduled(bus: EventSink, call: CallRecord): Promise<void> {
  await bus.publish([scheduledEvent(call)]);
}

/**
 * Announces a stored result. The recorder marks the call once the result is in the run's log;
 * until then a redelivery, or the sweeper, announces it again.
 */
export async function announceResult(
  bus: EventSink,
  call: CallRecord,
  result: CallResult,
): Promise<void> {
  await bus.publish([resultEvent(call, result)]);
}

/**
 * Both events of a finished call in one request: a call that finished without running (a
 * refusal, a decision, the sweeper) or one whose start was not announced yet.
 */
export async function announceFinished(bus: EventSink, call: CallRecord): Promise<void> {
  if (!call.result) return announceScheduled(bus, call);
  await bus.publish([scheduledEvent(call), resultEvent(call, call.result)]);
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
