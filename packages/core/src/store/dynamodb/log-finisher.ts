import { PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { CallRecord } from "@toolbus/wire/model/call";
import {
  approvalEventKey,
  type RunEvent,
  resultEventKey,
  scheduledEventKey,
} from "@toolbus/wire/model/events";
import { ValidationError } from "../../errors";
import { storedCall } from "./call-runs";
import { type DynamoStoreOptions, isConditionFailure } from "./client";
import { logSortKey, runLogKeyCondition, runPartition } from "./items";
import {
  APPEND_ATTEMPTS,
  appendGaveUp,
  forgetHead,
  headOf,
  pauseBeforeAttempt,
  rememberHead,
} from "./log-ends";
import { markCall, markedFields, rememberMarks } from "./log-marks";
import {
  entryCount,
  entryEventKeys,
  entryRange,
  LOG_LAST_ATTRIBUTE,
  LOG_SEQ_ATTRIBUTE,
  type LogRequest,
  logEntries,
  unloggedEvents,
} from "./log-requests";

/*
 * A call the API ran for a waiting caller is announced by the API alone: its start and its
 * result go on the bus together, marked `log: "direct"`, and nobody else logs them. So it needs
 * no transaction to be logged once: its entry is written where the run's log ends (on the
 * condition that the place is free, as always), then the call is marked. A transaction bills
 * each item twice: this is three write units where the transaction took six.
 *
 * Between the two writes the events are in the log and the call is not marked. Whoever might
 * log them again looks first: the finisher itself, after a lost answer (it knows its own entry
 * and its own marks by what DynamoDB returns on a failed condition), and the recorder, which
 * logs such a call's events only when the finisher failed or died before marking it (the
 * announcement is repeated for it, by the finisher or the sweeper): it finds them in the run's
 * log and only marks the call (withoutLoggedAlone). Where the call turns out marked by another
 * writer after all, the finisher's entry is turned into a skip entry, which readers pass over.
 */

/**
 * How far back the recorder looks for a finisher's entry, newest first: further than a run
 * logs between a call's end and the sweeper announcing it again (its deadline), in a few reads
 * paid only on that path.
 */
const LOOKBACK_ENTRIES = 10_000;
const LOOKBACK_PAGE = 1_000;

/**
 * Whether the finisher logs these events alone, without a transaction: it says nobody else was
 * told of them, the API ran the call, and the call shows nothing logged yet (a mark is proof
 * that some writer was told of the call after all: a start announced, then reported failed).
 */
export function logsAlone(request: LogRequest): boolean {
  const { call } = request;
  return (
    request.finisher === "alone" &&
    call.dispatch === "direct" &&
    call.scheduledLogSeq === undefined &&
    call.resultLogSeq === undefined &&
    call.approvalLogSeq === undefined &&
    call.progressLogStep === undefined &&
    entryCount(request.events) === 1
  );
}

/**
 * Logs a finisher's events alone: the entry where the run ends, then the call's marks. What is
 * left to log when another writer marked the call first goes back to the caller, for a
 * transaction.
 */
export async function appendAsFinisher(
  options: DynamoStoreOptions,
  request: LogRequest,
): Promise<LogRequest | undefined> {
  const { call, events } = request;
  const runId = call.parentRunId;
  const at = (options.now?.() ?? new Date()).toISOString();
  for (let attempt = 1; ; attempt++) {
    const end = await headOf(options, runId);
    const [entry] = logEntries(events, end + 1);
    if (!entry) return undefined;
    const key = { pk: runPartition(runId), sk: logSortKey(entry.first) };
    if (!(await claimPlace(options, key, entry.fields, events))) {
      // Another writer took the place: this process's idea of the run's end was stale.
      forgetHead(options, runId);
      if (attempt >= APPEND_ATTEMPTS) throw appendGaveUp(attempt);
      await pauseBeforeAttempt(attempt);
      continue;
    }
    const last = entryRange({ sk: key.sk, ...entry.fields }).last;
    rememberHead(options, runId, last);
    const seqs = events.map((_, index) => entry.first + index);
    const refused = await mark(options, { call, events }, seqs, at);
    if (!refused) return undefined;
    // Marked by another writer first (or the call holds no result to log): this entry repeats
    // what the log has, so readers pass over it from now on, and what is still missing (if
    // anything) is logged with a transaction, like any event others may log too.
    await skip(options, key.sk, runId, last);
    if (!refused.result && events.some((event) => event.detailType === "ToolResultReceived")) {
      throw new ValidationError("A result is logged only for a call that has one.", {
        details: { parentRunId: call.parentRunId, callId: call.callId },
      });
    }
    return { call: refused, events: unloggedEvents(refused, events) };
  }
}

/** Turns an entry into one readers pass over, covering the same places. */
async function skip(options: DynamoStoreOptions, sk: string, runId: string, last: number) {
  const first = entryRange({ sk }).first;
  await options.client.send(
    new PutCommand({
      TableName: options.tableName,
      Item: {
        pk: runPartition(runId),
        sk,
        skip: true,
        ...(last > first && { [LOG_LAST_ATTRIBUTE]: last }),
      },
    }),
  );
}

/**
 * Puts the entry at its place if the place is free; true when it is there, written now or by
 * this same request before an answer was lost (its events' keys are the entry's).
 */
async function claimPlace(
  options: DynamoStoreOptions,
  key: { pk: string; sk: string },
  fields: Record<string, unknown>,
  events: RunEvent[],
): Promise<boolean> {
  try {
    await options.client.send(
      new PutCommand({
        TableName: options.tableName,
        Item: { ...key, ...fields },
        ConditionExpression: "attribute_not_exists(pk)",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const there = error.Item ? unmarshall(error.Item as Parameters<typeof unmarshall>[0]) : {};
    const keys = entryEventKeys(there);
    return keys.length === events.length && events.every((event, i) => keys[i] === event.eventKey);
  }
}

/**
 * Marks the call logged at `seqs`; undefined when it is so now (this request's marks, perhaps
 * from an attempt whose answer was lost), else the call as stored, marked by someone else.
 */
async function mark(
  options: DynamoStoreOptions,
  request: LogRequest,
  seqs: number[],
  at: string,
): Promise<CallRecord | undefined> {
  try {
    await options.client.send(
      new UpdateCommand({
        TableName: options.tableName,
        ...markCall(request, seqs, at),
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error) || !error.Item) throw error;
    const stored = storedCall(unmarshall(error.Item as Parameters<typeof unmarshall>[0]));
    const ours = request.events.every(
      (event, index) =>
        event.detailType === "ToolCallProgress" ||
        stored[LOG_SEQ_ATTRIBUTE[event.detailType]] === seqs[index],
    );
    if (!ours) return stored;
  }
  rememberMarks(options, request, seqs, at);
  return undefined;
}

/**
 * Whether these events might be in the log already, unmarked: the recorder logging the result
 * of a call a finisher would have logged alone (the finisher failed to mark it, or stopped
 * before it could, and the call was announced again). Never the case on the way calls
 * normally go: such a call's result reaches the recorder only then.
 */
function mayBeLoggedAlone(request: LogRequest): boolean {
  const { call, events } = request;
  return (
    request.finisher === undefined &&
    call.dispatch === "direct" &&
    call.result !== undefined &&
    call.resultLogSeq === undefined &&
    events.some((event) => event.detailType === "ToolResultReceived")
  );
}

/**
 * The request without what a finisher already logged alone: its entry, found among the run's
 * newest entries, is marked on the call where it is instead of being logged again; one that
 * holds an event the call shows logged elsewhere repeats it, and is turned into a skip entry
 * (what it alone holds is then logged as usual).
 */
export async function withoutLoggedAlone(
  options: DynamoStoreOptions,
  request: LogRequest,
): Promise<LogRequest> {
  if (!mayBeLoggedAlone(request)) return request;
  const { call } = request;
  const wanted = new Map(request.events.map((event) => [event.eventKey, event]));
  const marked: { events: RunEvent[]; seqs: number[] } = { events: [], seqs: [] };
  // Where the call shows its once-only events logged, by their keys.
  const markedAt = new Map<string, number | undefined>([
    [scheduledEventKey(call.parentRunId, call.callId), call.scheduledLogSeq],
    [resultEventKey(call.parentRunId, call.callId), call.resultLogSeq],
    [approvalEventKey(call.parentRunId, call.callId), call.approvalLogSeq],
  ]);
  for (const found of await entriesHolding(options, call.parentRunId, [...wanted.keys()])) {
    const events = found.keys.map((key) => wanted.get(key));
    const repeats = found.keys.some((key, index) => {
      const logged = markedAt.get(key);
      return logged !== undefined && logged !== found.first + index;
    });
    if (repeats) {
      await skip(options, found.sk, call.parentRunId, found.last);
      continue;
    }
    events.forEach((event, index) => {
      if (!event) return;
      marked.events.push(event);
      marked.seqs.push(found.first + index);
    });
  }
  if (marked.events.length === 0) return request;
  const at = (options.now?.() ?? new Date()).toISOString();
  const logged = { call, events: marked.events };
  const refused = await mark(options, logged, marked.seqs, at);
  const now = refused ?? { ...call, ...markedFields(logged, marked.seqs, at) };
  return { call: now, events: unloggedEvents(now, request.events) };
}

/** The run's newest entries that hold any of these events, looking back LOOKBACK_ENTRIES. */
async function entriesHolding(
  options: DynamoStoreOptions,
  runId: string,
  eventKeys: string[],
): Promise<{ sk: string; first: number; last: number; keys: string[] }[]> {
  const wanted = new Set(eventKeys);
  const found: { sk: string; first: number; last: number; keys: string[] }[] = [];
  let startKey: Record<string, unknown> | undefined;
  let read = 0;
  do {
    const page = await options.client.send(
      new QueryCommand({
        TableName: options.tableName,
        ...runLogKeyCondition(runId),
        ScanIndexForward: false,
        Limit: LOOKBACK_PAGE,
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
        // What says where an entry is and which events it holds, not the events' details.
        ProjectionExpression: "sk, eventKey, #skip, #last, eventsJson, eventsZ",
        ExpressionAttributeNames: { "#skip": "skip", "#last": LOG_LAST_ATTRIBUTE },
      }),
    );
    for (const item of page.Items ?? []) {
      if (item.skip === true) continue;
      const { first, last } = entryRange(item);
      // An entry of the log's older form (EVENT#, local tables only) has no place.
      if (!Number.isFinite(first)) continue;
      const keys = entryEventKeys(item);
      if (keys.some((key) => wanted.has(key))) {
        found.push({ sk: String(item.sk), first, last, keys });
      }
    }
    read += page.Items?.length ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey && read < LOOKBACK_ENTRIES);
  return found;
}
