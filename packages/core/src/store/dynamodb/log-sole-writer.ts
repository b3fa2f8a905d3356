import { QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { CallRecord } from "@toolbus/wire/model/call";
import { REQUEST_MAY_LAND_MS } from "../../sdk-options";
import type { ItemOutcome } from "../../util/group-commit";
import { putItems } from "./batch-put";
import { callItem } from "./call-runs";
import type { DynamoStoreOptions } from "./client";
import { isConditionFailure } from "./client";
import type { StreamEnd } from "./event-stream";
import { callKey, logSortKey, runLogKeyCondition, runPartition } from "./items";
import {
  entryEventStamps,
  entryRange,
  LOG_LAST_ATTRIBUTE,
  type LogRequest,
  logEntries,
  mergeByCall,
  progressOf,
} from "./log-requests";
import {
  putStreamed,
  recoverTail,
  STREAM_AT_ATTRIBUTE,
  type StoredEntry,
  type StreamedEntry,
  type StreamUnit,
  unstreamedEntries,
} from "./log-sole-stream";
import { perTable } from "./per-table";
import { recentCalls } from "./recent-calls";

type Item = Record<string, unknown>;

/** Runs whose log a process keeps in mind (where it ends, which events it holds). */
const REMEMBERED_RUNS = 1_000;

/** What the only writer knows of a run's log: where it ends and which events it holds. */
interface RunLog {
  end: number;
  keys: Set<string>;
}

/** What the only writer knows of the table: each run's log, and where the stage stream ends. */
interface SoleWriterMemory {
  runs: Map<string, RunLog>;
  stream: StreamEnd | undefined;
  /** Until when a failed write may still land (ms): nothing is read again before then. */
  settledAt: number;
}

/**
 * Appending where one process writes the whole table (`npm start`): it knows where each run's
 * log ends and which events it holds, and where the stage stream ends, so entries, marks and
 * the stream's chunk holding the entries' events go out as plain puts in one BatchWriteItem,
 * with no transaction (log-sole-stream.ts). The stream then holds exactly what the run logs
 * hold, each run's events in the order it logged them, as the table's change stream feeds it
 * on AWS. (DynamoDB Local runs a transaction while holding up every other request: transactions
 * there cost a call more than they cost the recorder.)
 *
 * A crash can cut a batch short. So what the process knows of a run is read from the table the
 * first time it appends to the run, and again after any failed write: an empty place left by a
 * cut batch is filled with a skip entry that readers pass over, the events it lost come back
 * (the bus delivers again what it had not finished) and go at the end, and entries whose chunk
 * was lost are streamed before anything more of their run. Where the stream ends is read the
 * same way, putting again the entries of its newest chunk, which a cut may have left out.
 */
export async function appendAsSoleWriter(
  options: DynamoStoreOptions,
  requests: LogRequest[],
): Promise<ItemOutcome<void>[]> {
  const known = soleWriterMemory(options);
  const at = (options.now?.() ?? new Date()).toISOString();
  const units: StreamUnit[] = [];
  const marked: CallRecord[] = [];
  const touched = new Set<string>();
  try {
    if (!known.stream) {
      // A write that failed may still land: reading the table before it has would give its
      // places again, for it to overwrite.
      const wait = known.settledAt - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      known.stream = await recoverTail(options);
    }
    for (const request of mergeByCall(requests)) {
      const runId = request.call.parentRunId;
      touched.add(runId);
      let log = known.runs.get(runId);
      if (!log) {
        const read = await readRunLog(options, runId);
        // Logged before a crash without their chunk: streamed before anything more of the run.
        for (const entry of read.unstreamed) units.push({ entries: [entry], others: [] });
        log = read.log;
      }
      known.runs.delete(runId);
      known.runs.set(runId, log);
      const fresh = request.events.filter((event) => !log.keys.has(event.eventKey));
      const entries: StreamedEntry[] = logEntries(fresh, log.end + 1).map((entry) => ({
        runId,
        first: entry.first,
        events: entry.events,
        item: { pk: runPartition(runId), sk: logSortKey(entry.first), ...entry.fields },
      }));
      log.end += fresh.length;
      for (const event of fresh) log.keys.add(event.eventKey);
      const mark = publicationMark(request, at);
      if (mark) marked.push(mark);
      if (entries.length > 0 || mark) {
        units.push({ entries, others: mark ? [callItem(mark)] : [] });
      }
    }
    while (known.runs.size > REMEMBERED_RUNS) {
      const oldest = known.runs.keys().next();
      if (oldest.done) break;
      known.runs.delete(oldest.value);
    }
    await putStreamed(options, known.stream, units);
  } catch (error) {
    // What reached the table is unknown: read the runs and the stream again before the next append.
    for (const runId of touched) known.runs.delete(runId);
    known.stream = undefined;
    // Only a request that got no answer may still be in the server's queue.
    if ((error as { name?: unknown } | null)?.name === "TimeoutError") {
      known.settledAt = Date.now() + REQUEST_MAY_LAND_MS;
    }
    return requests.map(() => ({ ok: false, error }));
  }
  // Best effort, after the log is written: a step it cannot mark shows on the next one.
  for (const request of requests) await markProgress(options, request).catch(() => undefined);
  const recent = recentCalls(options);
  for (const call of marked) recent.remember(call);
  return requests.map(() => ({ ok: true, value: undefined }));
}

const soleWriterMemory = perTable(
  (): SoleWriterMemory => ({ runs: new Map(), stream: undefined, settledAt: 0 }),
);

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
 * multi-event entry's events), and its last entries whose chunk a crash cut off. Places a cut
 * batch left empty (those no entry covers) are filled with skip entries, so readers waiting at
 * them read on.
 */
async function readRunLog(
  options: DynamoStoreOptions,
  runId: string,
): Promise<{ log: RunLog; unstreamed: StreamedEntry[] }> {
  const { client, tableName } = options;
  const pk = runPartition(runId);
  const keys = new Set<string>();
  // The places each entry covers, in key order: a multi-event entry covers first..last.
  const ranges: { first: number; last: number }[] = [];
  const stored: StoredEntry[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        ...runLogKeyCondition(runId),
        ProjectionExpression:
          "sk, eventKey, occurredAt, #last, eventsJson, eventsZ, #streamAt, skip",
        ExpressionAttributeNames: { "#last": LOG_LAST_ATTRIBUTE, "#streamAt": STREAM_AT_ATTRIBUTE },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    for (const item of page.Items ?? []) {
      const held = entryEventStamps(item);
      for (const { key } of held) keys.add(key);
      const range = entryRange(item);
      if (range.first > 0) ranges.push(range);
      if (item.skip !== true) {
        const streamAt = item[STREAM_AT_ATTRIBUTE];
        stored.push({
          sk: String(item.sk),
          keys: held.map((stamp) => stamp.key),
          latest: Math.max(...held.map((stamp) => Date.parse(stamp.occurredAt ?? ""))),
          streamAt: typeof streamAt === "number" ? streamAt : undefined,
        });
      }
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
  await putItems(options, holes);
  return {
    log: { end, keys },
    unstreamed: await unstreamedEntries(options, runId, stored),
  };
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
