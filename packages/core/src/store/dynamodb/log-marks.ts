import type { CallRecord } from "@toolbus/wire/model/call";
import type { DynamoStoreOptions } from "./client";
import { callKey } from "./items";
import { jsonFieldStored } from "./json-text";
import { LOG_SEQ_ATTRIBUTE, type LogRequest, progressOf, progressStep } from "./log-requests";
import { recentCalls } from "./recent-calls";

/*
 * The marks logging leaves on a call's record: where each once-only event sits in its run's
 * log, the last progress step logged, and, once its result is logged, that it was announced
 * (off the outbox index). The log writers put them on in the same write as the entries (a
 * transaction) or right after them (a finisher logging alone).
 */

/** What logging these events sets on the call record. */
export function markedFields(request: LogRequest, seqs: number[], at: string) {
  const fields: Partial<CallRecord> = {};
  request.events.forEach((event, index) => {
    if (event.detailType === "ToolCallProgress") {
      fields.progressLogStep = progressStep(request.call, event);
      fields.progress = progressOf(event);
      return;
    }
    fields[LOG_SEQ_ATTRIBUTE[event.detailType]] = seqs[index];
    if (event.detailType === "ToolResultReceived") {
      fields.resultPublishedAt = at;
    }
  });
  return fields;
}

/**
 * The call's marks, each only if not set: a second logging of one event cancels the
 * transaction instead of writing a second entry. Logging the result takes the call off the
 * outbox index. Progress steps only count up, and none is logged after the result.
 */
export function markCall(request: LogRequest, seqs: number[], at: string) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const conditions = ["attribute_exists(pk)"];
  let leavesIndex = false;
  const steps = request.events
    .filter((event) => event.detailType === "ToolCallProgress")
    .map((event) => progressStep(request.call, event));
  if (steps.length > 0) {
    names["#progressLogStep"] = "progressLogStep";
    values[":firstStep"] = Math.min(...steps);
    values[":lastStep"] = Math.max(...steps);
    sets.push("#progressLogStep = :lastStep");
    // The latest step rides on the same write: GET …/calls/{call} shows it at no extra cost.
    const latest = request.events.filter((event) => event.detailType === "ToolCallProgress").at(-1);
    if (latest) {
      names["#progress"] = "progress";
      values[":progress"] = progressOf(latest);
      sets.push("#progress = :progress");
    }
    conditions.push("(attribute_not_exists(#progressLogStep) OR #progressLogStep < :firstStep)");
    if (!request.events.some((event) => event.detailType === "ToolResultReceived")) {
      names["#resultLogSeq"] = LOG_SEQ_ATTRIBUTE.ToolResultReceived;
      conditions.push("attribute_not_exists(#resultLogSeq)");
    }
  }
  request.events.forEach((event, index) => {
    if (event.detailType === "ToolCallProgress") return;
    const attribute = LOG_SEQ_ATTRIBUTE[event.detailType];
    names[`#${attribute}`] = attribute;
    values[`:${attribute}`] = seqs[index];
    sets.push(`#${attribute} = :${attribute}`);
    conditions.push(`attribute_not_exists(#${attribute})`);
    if (event.detailType === "ToolResultReceived") {
      // The result is stored as text or deflated (json-text.ts): either form is a result.
      const result = jsonFieldStored("result");
      Object.assign(names, result.names);
      names["#published"] = "resultPublishedAt";
      values[":published"] = at;
      sets.push("#published = :published");
      conditions.push(result.condition);
      leavesIndex = true;
    }
  });
  return {
    Key: callKey(request.call.parentRunId, request.call.callId),
    UpdateExpression: `SET ${sets.join(", ")}${leavesIndex ? " REMOVE gsi2pk, gsi2sk" : ""}`,
    ConditionExpression: conditions.join(" AND "),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** The marks just written, on the call this process keeps in mind (if it keeps it). */
export function rememberMarks(
  options: DynamoStoreOptions,
  request: LogRequest,
  seqs: number[],
  at: string,
): void {
  const recent = recentCalls(options);
  const known = recent.get(request.call.parentRunId, request.call.callId);
  if (known) recent.remember({ ...known, ...markedFields(request, seqs, at) });
}
