import type { CallRecord } from "@toolbus/wire/model/call";
import { progressStepOf, type RunEvent } from "@toolbus/wire/model/events";
import { encodeJsonFields } from "./json-text";

/** A call's events to log, in order, none of them logged yet as far as the caller knows. */
export interface LogRequest {
  call: CallRecord;
  events: RunEvent[];
}

/** The detail types a call announces once: its record keeps where each sits in the log. */
export type OnceDetailType = Exclude<RunEvent["detailType"], "ToolCallProgress">;

/** Where each once-only detail type's place in the log is kept on the call record. */
export const LOG_SEQ_ATTRIBUTE = {
  ToolCallScheduled: "scheduledLogSeq",
  ToolResultReceived: "resultLogSeq",
  ToolCallApprovalRequested: "approvalLogSeq",
} as const satisfies Record<OnceDetailType, keyof CallRecord>;

/** The step of a progress event of this call (0 when its key is not a progress key). */
export function progressStep(call: CallRecord, event: RunEvent): number {
  return progressStepOf(event.eventKey, call.parentRunId, call.callId) ?? 0;
}

/**
 * What of `events` the call record does not show logged, in the order the log wants: each
 * once-only event once (and not if marked), progress steps counting up past the last logged
 * one and none once the result is logged, every progress step before the result.
 */
export function unloggedEvents(call: CallRecord, events: RunEvent[]): RunEvent[] {
  const resultLogged = call.resultLogSeq !== undefined || call.resultPublishedAt !== undefined;
  let lastStep = call.progressLogStep ?? 0;
  const seen = new Set<string>();
  const kept: RunEvent[] = [];
  for (const event of events) {
    if (event.detailType === "ToolCallProgress") {
      const step = progressStep(call, event);
      if (resultLogged || step <= lastStep) continue;
      lastStep = step;
    } else {
      if (call[LOG_SEQ_ATTRIBUTE[event.detailType]] !== undefined) continue;
      if (seen.has(event.detailType)) continue;
      seen.add(event.detailType);
    }
    kept.push(event);
  }
  // Progress is reported while the call runs: a step arriving with its result goes first.
  return [
    ...kept.filter((event) => event.detailType !== "ToolResultReceived"),
    ...kept.filter((event) => event.detailType === "ToolResultReceived"),
  ];
}

/**
 * An event's detail carries a call's input or result: JSON text (see json-text.ts), deflated
 * when that is smaller. A result's entry is then about half its size: one write unit where
 * its text took two (twice that in the log writer's transaction).
 */
export const LOG_JSON_FIELDS = ["detail"];

/** An event's attributes as its run-log entry keeps them (read with decodeJsonFields). */
export const logEntryFields = (event: RunEvent): Record<string, unknown> =>
  encodeJsonFields(event, LOG_JSON_FIELDS, { compress: true });

export const callKeyOf = (call: CallRecord) => `${call.parentRunId}\n${call.callId}`;

/** Requests for one call become one (a write names an item once), events in order, each once. */
export function mergeByCall(requests: LogRequest[]): LogRequest[] {
  const merged = new Map<string, LogRequest>();
  for (const request of requests) {
    const known = merged.get(callKeyOf(request.call));
    const events = [...(known?.events ?? []), ...request.events];
    merged.set(callKeyOf(request.call), {
      call: request.call,
      events: unloggedEvents(request.call, events),
    });
  }
  return [...merged.values()];
}

/** A progress step as the call record keeps its latest: what it said, and when. */
export function progressOf(event: RunEvent): NonNullable<CallRecord["progress"]> {
  const { progress, total, message, reportedAt } = event.detail as {
    progress: number;
    total?: number;
    message?: string;
    reportedAt: string;
  };
  return {
    progress,
    ...(total === undefined ? {} : { total }),
    ...(message === undefined ? {} : { message }),
    reportedAt,
  };
}
