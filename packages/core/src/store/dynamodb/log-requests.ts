import type { CallRecord } from "@toolbus/wire/model/call";
import type { RunEvent } from "@toolbus/wire/model/events";

/** A call's events to log, in order, none of them logged yet as far as the caller knows. */
export interface LogRequest {
  call: CallRecord;
  events: RunEvent[];
}

/** Where each detail type's place in the log is kept on the call record. */
export const LOG_SEQ_ATTRIBUTE = {
  ToolCallScheduled: "scheduledLogSeq",
  ToolResultReceived: "resultLogSeq",
  ToolCallApprovalRequested: "approvalLogSeq",
} as const satisfies Record<RunEvent["detailType"], keyof CallRecord>;

/** An event's detail carries a call's input or result: JSON text (see json-text.ts). */
export const LOG_JSON_FIELDS = ["detail"];

export const callKeyOf = (call: CallRecord) => `${call.parentRunId}\n${call.callId}`;

/** Requests for one call become one (a write names an item once), events in order, each once. */
export function mergeByCall(requests: LogRequest[]): LogRequest[] {
  const merged = new Map<string, LogRequest>();
  for (const request of requests) {
    const known = merged.get(callKeyOf(request.call));
    const events = [...(known?.events ?? []), ...request.events];
    merged.set(callKeyOf(request.call), {
      call: request.call,
      events: events.filter(
        (event, index) =>
          events.findIndex((other) => other.detailType === event.detailType) === index,
      ),
    });
  }
  return [...merged.values()];
}
