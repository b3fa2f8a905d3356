import { BatchWriteCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CallRecord } from "@toolbus/wire/model/call";
import { UnavailableError } from "../../errors";
import type { ItemOutcome } from "../../util/group-commit";
import { callItem } from "./call-runs";
import type { DynamoStoreOptions } from "./client";
import { isConditionFailure } from "./client";
import { callKey, logSortKey, runLogKeyCondition, runPartition } from "./items";
import {
  entryEventKeys,
  entryRange,
  LOG_LAST_ATTRIBUTE,
  type LogRequest,
  logEntries,
  mergeByCall,
  progressOf,
} from "./log-requests";
import { perTable } from "./per-table";
import { recentCalls } from "./recent-calls";

type Item = Record<string, unknown>;

/** BatchWriteItem takes at most 25 items; what it leaves unprocessed is sent again. */
const BATCH = 25;
const MAX_ATTEMPTS = 4;
/** Runs whose log a process keeps in mind (where it ends, which events it holds). */
const REMEMBERED_RUNS = 1_000;

/** What the only writer knows of a run's log: where it ends and which events it holds. */
interface RunLog {
  end: number;
  keys: Set<string>;
}

/**
 * Appending where one process writes the whole table (`npm start`): it knows where each run's
 * log ends and which events it holds, so entries and marks go out as plain puts in one
 * BatchWriteItem, with no transaction. (DynamoDB Local runs a transaction while holding up
 * every other request: transactions there cost a call more than they cost the recorder.)
 *
 * A crash can cut a batch short. So what the process knows of a run is read from the table the
 * first time it appends to the run, and again after any failed write: an empty place left by a
 * cut batch is filled with a skip entry that readers pass over, and the events it lost come
 * back (the bus delivers again what it had not finished) and go at the end.
 */
export async function appendAsSoleWriter(
  options: DynamoStoreOptions,
  requests: LogRequest[],
): Promise<ItemOutcome<void>[]> {
  const known = soleWriterMemory(options);
  const at = (options.now?.() ?? new Date()).toISOString();
  const items: Item[] = [];
  const marked: CallRecord[] = [];
  const touched = new Set<string>();
  try {
    for (const request of mergeByCall(requests)) {
      const runId = request.call.parentRunId;
      touched.add(runId);
      const log = known.get(runId) ?? (await readRunLog(options, runId));
      known.delete(runId);
      known.set(runId, log);
      const fresh = request.events.filter((event) => !log.keys.has(event.eventKey));
      for (const entry of logEntries(fresh, log.end + 1)) {
        items.push({ pk: runPartition(runId), sk: logSortKey(entry.first), ...entry.fields });
      }
      log.end += fresh.length;
      for (const event of fresh) log.keys.add(event.eventKey);
      const mark = publicationMark(request, at);
      if (mark) {
        items.push(callItem(mark));
        marked.push(mark);
      }
    }
    while (known.size > REMEMBERED_RUNS) {
      const oldest = known.keys().next();
      if (oldest.done) break;
      known.delete(oldest.value);
    }
    for (let start = 0; start < items.length; start += BATCH) {
      await putAll(options, items.slice(start, start + BATCH));
    }
  } catch (error) {
    // What reached the table is unknown: read the runs again before the next append.
    for (const runId of touched) known.delete(runId);
    return requests.map(() => ({ ok: false, error }));
  }
  // Best effort, after the log is written: a step it cannot mark shows on the next one.
  for (const request of requests) await markProgress(options, request).catch(() => undefined);
  const recent = recentCalls(options);
  for (const call of marked) recent.remember(call);
  return requests.map(() => ({ ok: true, value: undefined }));
}

const soleWriterMemory = perTable(() => new Map<string, RunLog>());

/**
 * The finished call marked published (`resultPublishedAt`), to be put whole, off the outbox
 * index, when its result passes through here and it is not marked yet: logged now, or logged
 * before a crash cut off its mark. After `complete` nothing else writes a call, so a whole put
 * is safe.
 */
function publicationMark(request: LogRequest, at: string): CallRecord | undefined {
  const { call } = request;
  const hasResult = request.events.some((event) => event.detailType === "ToolResultReceived");
  if (!hasResult || !call.result || call.resultPublishedAt) return undefined;
  return { ...call, resultPublishedAt: at };
}

/**
 * The run's log as stored: its end and its events' keys (an entry's `eventKey`, or those of a
 * multi-event entry's events). Places a cut batch left empty (those no entry covers) are
 * filled with skip entries, so readers waiting at them read on.
 */
async function readRunLog(options: DynamoStoreOptions, runId: string): Promise<RunLog> {
  const { client, tableName } = options;
  const pk = runPartition(runId);
  const keys = new Set<string>();
  // The places each entry covers, in key order: a multi-event entry covers first..last.
  const ranges: { first: number; last: number }[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        ...runLogKeyCondition(runId),
        ProjectionExpression: "sk, eventKey, #last, eventsJson, eventsZ",
        ExpressionAttributeNames: { "#last": LOG_LAST_ATTRIBUTE },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    for (const item of page.Items ?? []) {
      for (const key of entryEventKeys(item)) keys.add(key);
      const range = entryRange(item);
      if (range.first > 0) ranges.push(range);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  const end = ranges.reduce((most, range) => Math.max(most, range.last), 0);
  const holes: Item[] = [];
  let next = 1;
  for (const range of ranges) {
    for (let seq = next; seq < range.first; seq++) {
      holes.push({ pk, sk: logSortKey(seq), skip: true });
    }
    next = Math.max(next, range.last + 1);
  }
  for (let start = 0; start < holes.length; start += BATCH) {
    await putAll(options, holes.slice(start, start + BATCH));
  }
  return { end, keys };
}

/**
 * A running call's latest progress step on its record, for `GET …/calls/{call}`: one update
 * per request that holds a step (the throttle sends at most two a second per call). A call
 * that finished meanwhile keeps its record as it is.
 */
async function markProgress(options: DynamoStoreOptions, request: LogRequest): Promise<void> {
  const latest = request.events.filter((event) => event.detailType === "ToolCallProgress").at(-1);
  if (!latest) return;
  const { client, tableName } = options;
  try {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: callKey(request.call.parentRunId, request.call.callId),
        UpdateExpression: "SET progress = :progress",
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":progress": progressOf(latest), ":running": "running" },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** One BatchWriteItem (a PutItem for one item), plus retries of what it left unprocessed. */
async function putAll(options: DynamoStoreOptions, items: Item[]): Promise<void> {
  const { client, tableName } = options;
  let pending = items;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await client.send(
      new BatchWriteCommand({
        RequestItems: { [tableName]: pending.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    pending = (UnprocessedItems?.[tableName] ?? []).flatMap((request) =>
      request.PutRequest?.Item ? [request.PutRequest.Item] : [],
    );
    if (pending.length === 0) return;
    if (attempt >= MAX_ATTEMPTS) {
      throw new UnavailableError("The data store is unavailable; retry later.");
    }
    await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
  }
}
