import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { RunEvent } from "@toolbus/wire/model/events";
import { ToolbusError } from "../../errors";
import { BATCH_ITEMS, putItems } from "./batch-put";
import type { DynamoStoreOptions } from "./client";
import { logEntryEvents } from "./event-log";
import {
  chunkItem,
  MAX_CHUNK_BYTES,
  MAX_EVENTS,
  namePartition,
  partitionOf,
  rawChunkEvents,
  readEnd,
  type StreamEnd,
  streamTopic,
} from "./event-stream";
import { wakeFollowers } from "./followers";
import {
  logSeqOf,
  logSortKey,
  runPartition,
  STREAM_PARTITION_SIZE,
  streamChunkKey,
  streamPartition,
} from "./items";
import { logEntries } from "./log-requests";

type Item = Record<string, unknown>;

/**
 * On a run-log entry the sole writer put: the first place of the stream chunk that holds its
 * events, written in the same request. What a restarted writer checks an entry against.
 */
export const STREAM_AT_ATTRIBUTE = "streamAt";
/**
 * On a chunk the sole writer put: the run-log entries written with it, in its events' order
 * (`run`, `first` place, `count` of events), so a writer that finds it newest can put them again.
 */
const LOGGED_ATTRIBUTE = "logged";

/** One run-log entry to put, with the events it holds: what its chunk streams. */
export interface StreamedEntry {
  runId: string;
  first: number;
  events: RunEvent[];
  /** The entry as stored, without STREAM_AT_ATTRIBUTE (set to its chunk's place when put). */
  item: Item;
}

/** What goes in one request, whole: a call's entries and its mark, or an entry streamed late. */
export interface StreamUnit {
  entries: StreamedEntry[];
  others: Item[];
}

/**
 * Where the stream ends, read at the first append and after any failed write, as each run's
 * end is. A crash can cut a request short (log-sole-writer.ts): the newest chunk's entries are
 * put again, so none is missing from its run's log while its events are in the stream (put
 * whole, they are the same items). No other chunk can be missing any: a request is sent only
 * once the one before it succeeded, and this read comes before the next after a failure.
 */
export async function recoverTail(options: DynamoStoreOptions): Promise<StreamEnd> {
  const end = await readEnd(options);
  if (end.seq > 0) {
    const { Items } = await options.client.send(
      new QueryCommand({
        TableName: options.tableName,
        KeyConditionExpression: "pk = :pk AND sk <= :at",
        ExpressionAttributeValues: {
          ":pk": streamPartition(end.seq),
          ":at": streamChunkKey(end.seq).sk,
        },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const newest = Items?.[0];
    if (newest) await putItems(options, loggedEntries(newest));
  }
  return end;
}

/** How long a chunk is kept: the stage's setting, which the sole writer must be given. */
function retentionOf(options: DynamoStoreOptions): number {
  const retentionDays = options.stream?.retentionDays;
  if (retentionDays === undefined) {
    throw new ToolbusError("The sole writer feeds the stage stream: it needs its retention.");
  }
  return Math.round(retentionDays * 86_400);
}

/** The entries a chunk was written with, rebuilt from its events exactly as first put. */
function loggedEntries(chunk: Item): Item[] {
  const logged = chunk[LOGGED_ATTRIBUTE];
  if (!Array.isArray(logged)) return [];
  // Read as written (not parsed, which could reshape them), so the entries come out the same.
  const events = rawChunkEvents(chunk) as RunEvent[];
  const items: Item[] = [];
  let next = 0;
  for (const { run, first, count } of logged as { run: string; first: number; count: number }[]) {
    const held = events.slice(next, next + count);
    next += count;
    for (const entry of logEntries(held, first)) {
      items.push({
        pk: runPartition(run),
        sk: logSortKey(entry.first),
        ...entry.fields,
        [STREAM_AT_ATTRIBUTE]: chunk.firstSeq,
      });
    }
  }
  return items;
}

/**
 * Puts the units in order, each request holding whole units and one chunk with exactly their
 * entries' events, at the stream's end. The chunk is put first: a request cut short leaves it
 * without some of its entries, which the next append puts again from it (recoverTail), never
 * entries without their chunk (but where BatchWriteItem leaves the chunk unprocessed until its
 * retries run out: unstreamedEntries). A chunk is written only once every place before it is:
 * the next request goes only once this one succeeded, and never spans two partitions (what is
 * left of a partition is filled with a chunk of no events, then the next one is named). A call
 * whose events do not fit one chunk (a large input and result) goes an entry to a request.
 */
export async function putStreamed(
  options: DynamoStoreOptions,
  tail: StreamEnd,
  units: StreamUnit[],
): Promise<void> {
  const retentionSeconds = retentionOf(options);
  let group: StreamUnit[] = [];
  for (const unit of units.flatMap(byEntryIfTooLarge)) {
    if (group.length > 0 && !fits(tail, [...group, unit])) {
      await putGroup(options, tail, group, retentionSeconds);
      group = [];
    }
    if (group.length === 0 && !fits(tail, [unit])) {
      await closePartition(options, tail, retentionSeconds);
    }
    group.push(unit);
  }
  if (group.length > 0) await putGroup(options, tail, group, retentionSeconds);
}

const eventsOf = (units: StreamUnit[]) =>
  units.flatMap((unit) => unit.entries.flatMap((entry) => entry.events));

/**
 * Whether the units' events fit one chunk (and its item): at most MAX_EVENTS events and
 * MAX_CHUNK_BYTES of them.
 */
function fitOneChunk(units: StreamUnit[]): boolean {
  const events = eventsOf(units);
  return events.length <= MAX_EVENTS && JSON.stringify(events).length <= MAX_CHUNK_BYTES;
}

/**
 * A unit whose events do not fit one chunk, as a unit an entry, its other items (the call's
 * mark) with the last: each entry's events fit one, since an event is bounded below a chunk's
 * bytes and entries group only small events (log-requests.ts).
 */
function byEntryIfTooLarge(unit: StreamUnit): StreamUnit[] {
  if (unit.entries.length < 2 || fitOneChunk([unit])) return [unit];
  return unit.entries.map((entry, index) => ({
    entries: [entry],
    others: index === unit.entries.length - 1 ? unit.others : [],
  }));
}

/** Whether the units go in one request: BatchWriteItem's items, one chunk, one partition. */
function fits(tail: StreamEnd, units: StreamUnit[]): boolean {
  const events = eventsOf(units);
  const items = units.reduce((sum, unit) => sum + unit.entries.length + unit.others.length, 1);
  // Units with no events (marks alone) take no place: they fit wherever the stream ends.
  const onePartition =
    events.length === 0 || partitionOf(tail.seq + events.length) === partitionOf(tail.seq + 1);
  return onePartition && (units.length === 1 || (items <= BATCH_ITEMS && fitOneChunk(units)));
}

/** Fills what is left of the tail's partition with a chunk of no events: readers pass it. */
async function closePartition(
  options: DynamoStoreOptions,
  tail: StreamEnd,
  retentionSeconds: number,
): Promise<void> {
  const first = tail.seq + 1;
  const last = (partitionOf(first) + 1) * STREAM_PARTITION_SIZE - 1;
  await putItems(options, [{ ...chunkItem(first, [], tail.at, retentionSeconds), lastSeq: last }]);
  tail.seq = last;
}

async function putGroup(
  options: DynamoStoreOptions,
  tail: StreamEnd,
  units: StreamUnit[],
  retentionSeconds: number,
): Promise<void> {
  const events = eventsOf(units);
  const others = units.flatMap((unit) => unit.others);
  if (events.length === 0) {
    await putItems(options, others);
    return;
  }
  const first = tail.seq + 1;
  const partition = partitionOf(first);
  if (partition > tail.partition) {
    await namePartition(options, partition);
    tail.partition = partition;
  }
  // Times never go back, even if the clock does: a place's time is at least its predecessor's.
  const at = Math.max((options.now?.() ?? new Date()).getTime(), tail.at);
  const entries = units.flatMap((unit) => unit.entries);
  await putItems(options, [
    {
      ...chunkItem(first, events, at, retentionSeconds),
      [LOGGED_ATTRIBUTE]: entries.map((entry) => ({
        run: entry.runId,
        first: entry.first,
        count: entry.events.length,
      })),
    },
    ...entries.map((entry) => ({ ...entry.item, [STREAM_AT_ATTRIBUTE]: first })),
    ...others,
  ]);
  tail.seq = first + events.length - 1;
  tail.at = at;
  wakeFollowers(streamTopic(options));
}

/** A stored entry as the recovery read sees it. */
export interface StoredEntry {
  sk: string;
  keys: string[];
  /** When the newest of its events occurred (ms); NaN where that is not known. */
  latest: number;
  streamAt: number | undefined;
}

/**
 * The run's last entries whose events are not in the stream: put by a request a crash cut
 * short before its chunk landed. Walked back from the run's end, chunk by chunk, to the first
 * chunk that holds its entries' events (or to an entry no sole writer put): an entry before
 * one that is streamed was streamed too, since a run is read again, and what it lost streamed
 * first, before anything more of it is logged. Where no chunk starts at an entry's place, it
 * never landed, or it expired: an entry whose events are older than the stream keeps any is
 * taken as streamed (its chunk, recorded after them, may be gone; the stream's readers would
 * not find it there either). Read whole, to be streamed now.
 */
export async function unstreamedEntries(
  options: DynamoStoreOptions,
  runId: string,
  stored: StoredEntry[],
): Promise<StreamedEntry[]> {
  const expiredBefore = (options.now?.() ?? new Date()).getTime() - retentionOf(options) * 1000;
  const lost: StoredEntry[] = [];
  let end = stored.length;
  while (end > 0) {
    const streamAt = stored[end - 1]?.streamAt;
    if (streamAt === undefined) break;
    let start = end - 1;
    while (start > 0 && stored[start - 1]?.streamAt === streamAt) start--;
    const streamed = await chunkKeys(options, streamAt);
    const missing = stored
      .slice(start, end)
      .filter((entry) =>
        streamed ? !entry.keys.every((key) => streamed.has(key)) : !(entry.latest < expiredBefore),
      );
    if (missing.length === 0) break;
    lost.unshift(...missing);
    end = start;
  }
  const entries: StreamedEntry[] = [];
  for (const { sk } of lost) {
    const { Item } = await options.client.send(
      new GetCommand({
        TableName: options.tableName,
        Key: { pk: runPartition(runId), sk },
        ConsistentRead: true,
      }),
    );
    if (!Item) continue;
    const { [STREAM_AT_ATTRIBUTE]: _, ...item } = Item;
    entries.push({
      runId,
      first: logSeqOf(sk),
      events: logEntryEvents(item),
      item,
    });
  }
  return entries;
}

/** The keys of the events the chunk starting at `first` holds; undefined where there is none. */
async function chunkKeys(
  options: DynamoStoreOptions,
  first: number,
): Promise<Set<string> | undefined> {
  const { Item } = await options.client.send(
    new GetCommand({
      TableName: options.tableName,
      Key: streamChunkKey(first),
      ConsistentRead: true,
    }),
  );
  if (!Item) return undefined;
  return new Set(
    rawChunkEvents(Item).flatMap((event) => {
      const key = (event as { eventKey?: unknown } | null)?.eventKey;
      return typeof key === "string" ? [key] : [];
    }),
  );
}
