import type { CallRecord } from "@toolbus/wire/model/call";
import {
  approvalEventKey,
  occurredAtOf,
  progressStepOf,
  type RunEvent,
  resultEventKey,
  scheduledEventKey,
} from "@toolbus/wire/model/events";
import * as z from "zod";
import { scheduledEntry } from "../app/calls/lifecycle";
import { ValidationError, zodIssues } from "../errors";
import { fallbackLogger, type Logger } from "../observability/log";
import type { CallStore, EventLog } from "../ports";
import { canonicalJson } from "../util/canonical-json";
import { DETAIL_TYPES, EVENT_SOURCE } from "../wiring";

const recordable = z.object({
  source: z.string(),
  "detail-type": z.enum(DETAIL_TYPES),
  time: z.string(),
  detail: z
    .object({
      eventKey: z.string().min(1),
      parentRunId: z.string().min(1),
      callId: z.string().min(1),
      toolId: z.string().optional(),
      scheduledAt: z.string().optional(),
      completedAt: z.string().optional(),
      reportedAt: z.string().optional(),
      status: z.string().optional(),
      output: z.unknown().optional(),
      failure: z.unknown().optional(),
      resultOmitted: z.boolean().optional(),
    })
    .passthrough(),
});
type Recordable = z.infer<typeof recordable>;

export interface RecorderDeps {
  events: EventLog;
  /** Where the calls are: an event is recorded only if it says what its call record says. */
  calls: Pick<CallStore, "get">;
  /** The call as this process last wrote it, if it did: checked first, to spare a read. */
  recentCall?: (parentRunId: string, callId: string) => CallRecord | undefined;
  /** Where refused events are reported (default: JSON lines on stderr). */
  log?: Logger;
}

/**
 * The recorder: appends the call events their announcer did not log itself (not marked
 * `log: "direct"`) to their run's log, in the order they are logged, each once (the call
 * record keeps where its events are), so redeliveries and republished events leave the log
 * unchanged. Logging a result is also what takes the call off the outbox: until then the
 * sweeper announces it again.
 *
 * Anyone allowed to publish on the bus could claim to be Toolbus, so the call record is the
 * authority: a `ToolCallScheduled` is recorded only for a call that was recorded with that
 * tool at that moment, and a `ToolResultReceived` only when it carries the stored result.
 * Both are written before they are announced, so a real event always finds its record
 * (the read is strongly consistent). A `ToolCallProgress` is recorded for a call that has
 * started and whose result is not in the log yet: a step arriving after it is late, dropped. A refused event is reported, not retried: asking again
 * cannot change the answer.
 */
export function createRecorder(deps: () => RecorderDeps | Promise<RecorderDeps>) {
  return async (event: unknown): Promise<void> => {
    const resolved = await deps();
    const verified = await verifiedEvent(event, resolved);
    if (!verified) return;
    const { call, entry } = verified;
    // A call that has its result already (a fast one: both events were announced together,
    // after the result was stored) is logged whole by its result's event, scheduling first, in
    // one write; its scheduling's event adds nothing but a second write racing the first. The
    // result's event is sure to come: until it is logged, the call stays on the outbox and the
    // sweeper announces it again.
    if (entry.detailType === "ToolCallScheduled" && call.result !== undefined) return;
    // A result (or a progress step) never comes first in the log: one that arrives before its
    // call's scheduling (which is retried or announced again, and so late) brings it, rebuilt
    // from the record. The log keeps each once, so the scheduling arriving after is left out.
    const bringsScheduling =
      entry.detailType === "ToolResultReceived" || entry.detailType === "ToolCallProgress";
    await resolved.events.append(call, bringsScheduling ? [scheduledEntry(call), entry] : [entry]);
  };
}

/** What checking an event against its call record needs. */
export type VerifyDeps = Pick<RecorderDeps, "calls" | "recentCall" | "log">;

/**
 * The run event a bus event stands for, with its call, when the call record confirms it;
 * undefined (and reported) when it does not. Not a Toolbus event at all: a ValidationError.
 * The one check every consumer that keeps events (the run logs, the stage stream) makes.
 */
export async function verifiedEvent(
  event: unknown,
  deps: VerifyDeps,
): Promise<{ call: CallRecord; entry: RunEvent } | undefined> {
  const parsed = recordable.safeParse(event);
  if (!parsed.success) {
    throw new ValidationError("Not a Toolbus event the recorder knows.", {
      details: zodIssues(parsed.error.issues, "(event)"),
    });
  }
  const { detail, time } = parsed.data;
  const { calls, recentCall, log = fallbackLogger() } = deps;
  const recent = recentCall?.(detail.parentRunId, detail.callId);
  const call =
    recent && mismatch(parsed.data, recent) === undefined
      ? recent
      : await calls.get(detail.parentRunId, detail.callId);
  const refusal = mismatch(parsed.data, call);
  if (refusal || !call) {
    log.warn("event refused: it does not match its call record", {
      reason: refusal,
      detailType: parsed.data["detail-type"],
      eventKey: detail.eventKey,
      parentRunId: detail.parentRunId,
      callId: detail.callId,
    });
    return undefined;
  }
  return {
    call,
    entry: {
      eventKey: detail.eventKey,
      detailType: parsed.data["detail-type"],
      occurredAt: occurredAtOf(detail, time),
      detail,
    },
  };
}

/** Why an event is not what Toolbus announced for this call, or undefined when it is. */
function mismatch(event: Recordable, call: CallRecord | undefined): string | undefined {
  const { detail } = event;
  if (event.source !== EVENT_SOURCE) return `its source is not ${EVENT_SOURCE}`;
  if (!call) return "no such call was recorded";
  if (detail.toolId !== call.toolId) return "its tool is not the call's";
  if (event["detail-type"] === "ToolCallScheduled") {
    if (detail.eventKey !== scheduledEventKey(call.parentRunId, call.callId)) return "wrong key";
    if (detail.scheduledAt !== call.scheduledAt) return "its time is not the call's";
    return undefined;
  }
  if (event["detail-type"] === "ToolCallProgress") {
    const step = progressStepOf(detail.eventKey, call.parentRunId, call.callId);
    if (step === undefined) return "wrong key";
    if (call.status === "pending" || call.status === "awaiting_approval") {
      return "the call has not started";
    }
    // A step is kept if it is in the log before the result (whoever finished the call logs
    // its last steps with it); one the log passed over is late, and kept nowhere.
    const resultLogged = call.resultPublishedAt !== undefined || call.resultLogSeq !== undefined;
    if (resultLogged && step > (call.progressLogStep ?? 0)) {
      return "the call's result is logged already";
    }
    return undefined;
  }
  if (event["detail-type"] === "ToolCallApprovalRequested") {
    if (detail.eventKey !== approvalEventKey(call.parentRunId, call.callId)) return "wrong key";
    if (!call.approval) return "the call needs no approval";
    if (detail.scheduledAt !== call.scheduledAt) return "its time is not the call's";
    return undefined;
  }
  const result = call.result;
  if (!result) return "the call has no result";
  if (detail.eventKey !== resultEventKey(call.parentRunId, call.callId)) return "wrong key";
  if (detail.status !== result.status || detail.completedAt !== result.completedAt) {
    return "its outcome is not the stored one";
  }
  // A result too large for an event carries a preview of the output, not the output.
  if (!detail.resultOmitted && detail.output !== result.output) return "its output differs";
  if (canonicalJson(detail.failure ?? null) !== canonicalJson(result.failure ?? null)) {
    return "its failure differs";
  }
  return undefined;
}
