import { setTimeout as delay } from "node:timers/promises";
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type RunEvent, runEvent } from "@toolbus/wire/model/events";
import * as z from "zod";
import type { EventStream, StreamEntry } from "../../ports";
import { GroupCommit, type ItemOutcome } from "../../util/group-commit";
import {
  type DynamoStoreOptions,
  guard,
  isConditionFailure,
  parseStored,
  queryAll,
} from "./client";
import { nextWake, wakeFollowers } from "./followers";
import { STREAM_HEAD_KEY, STREAM_PARTITION_SIZE, streamChunkKey, streamPartition } from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";
import { perTable } from "./per-table";

/** Events one commit (one chunk) takes at most. */
export const MAX_EVENTS = 200;
/** A chunk's events as JSON text, under DynamoDB's 400 KB item limit with room to spare. */
export const MAX_CHUNK_BYTES = 300_000;
/** Event keys a writer remembers, so an event the bus hands over twice is appended once. */
const REMEMBERED_KEYS = 20_000;
/**
 * How often an append is tried when another writer takes the place it meant to write, and the most
 * it waits (times the attempt, at random) before the next: writers fed from separate shards
 * of the table's change stream rarely commit at the same moment.
 */
const RACE_ATTEMPTS = 5;
const RACE_BACKOFF_MS = 20;

interface Pending {
  event: RunEvent;
  retentionSeconds: number;
}

/**
 * Where the stream ends: its last place and that place's time, and the newest partition the
 * head names (-1 before the first commit). What a writer keeps between commits.
 */
export interface StreamEnd {
  seq: number;
  at: number;
  partition: number;
}

interface WriterMemory {
  state: StreamEnd | undefined;
  keys: Set<string>;
}

const memories = perTable((): WriterMemory => ({ state: undefined, keys: new Set() }));

const storedChunk = z.object({ events: z.array(runEvent) });
/**
 * A chunk's events as JSON text, deflated when that is smaller (json-text.ts): a call's two
 * events then fit one write unit instead of three.
 */
const CHUNK_JSON_FIELDS = ["events"];

/**
 * One commit at a time per process: places are handed out in order, so a later commit never
 * lands before an earlier one. Across processes writers take turns at the stream's end: on AWS
 * the table's change stream feeds one invocation per shard at a time, so a stage with several
 * shards has several writers. One that finds its chunk's place taken (a conditional put)
 * appends again after the winner (append).
 */
const streamWriter = perTable(
  (options): GroupCommit<Pending, void> =>
    new GroupCommit((pending) => commit(options, pending), {
      maxItems: MAX_EVENTS,
      maxBytes: MAX_CHUNK_BYTES,
      sizeOf: (item) => JSON.stringify(item.event).length,
      maxInFlight: 1,
    }),
);

/**
 * The stage's events in one order. Each commit writes its events as one chunk item (its first
 * and last place, the events as JSON text, deflated), on the condition that no chunk starts at
 * its first place: one write per commit, however many events it holds. A writer starts a chunk
 * right after the last one it wrote or read, so chunks form a chain with no place left out: a
 * chunk exists only once every place before it is written. So the stream ends where its newest
 * chunk does, a reader that has read up to a place has seen everything before it, and a writer
 * whose idea of the end is stale finds its first place taken, reads where the stream ends, and
 * appends again (append). A commit is one put: nothing is ever half written.
 *
 * STREAM / HEAD names the newest partition (`partition`), moved on before a partition's first
 * chunk is written, so finding the end is one read and one Query (a reader that found it before
 * looks in that partition first: readerEnd). Releases before this one kept
 * the last place there (`seq`, `at`), moved after every commit; it is still read, so a stream
 * they wrote goes on where they left it. Chunks expire `retentionDays` after they were recorded;
 * where none is left, the stream goes on from the next partition, so no place is used twice.
 *
 * Where one process writes the whole table (`npm start`), it is the stream's only writer: it
 * puts each chunk with the run-log entries that hold its events, in one request, knowing where
 * the stream ends as it knows where each run's log does (log-sole-stream.ts). A chunk there may
 * hold no events: it fills what was left of a partition, and readers pass it.
 */
export class DynamoEventStream implements EventStream {
  readonly #options: DynamoStoreOptions;
  readonly #retentionSeconds: number;

  constructor(options: DynamoStoreOptions, settings: { retentionDays: number }) {
    this.#options = options;
    this.#retentionSeconds = Math.round(settings.retentionDays * 86_400);
  }

  async append(events: RunEvent[]): Promise<void> {
    const writer = streamWriter(this.#options);
    await guard("stream.append", this.#options.tableName, async () => {
      let pending = events;
      for (let attempt = 1; ; attempt++) {
        const outcomes = await Promise.allSettled(
          pending.map((event) =>
            writer.submit({ event, retentionSeconds: this.#retentionSeconds }),
          ),
        );
        const failed = outcomes.find((outcome) => outcome.status === "rejected");
        if (!failed) return;
        // A writer that lost a race to another wrote nothing of the losing chunk and forgot where
        // the stream stood: it appends what did not go in again, after the winner.
        if (!isConditionFailure(failed.reason) || attempt >= RACE_ATTEMPTS) throw failed.reason;
        pending = pending.filter((_, index) => outcomes[index]?.status === "rejected");
        await delay(Math.random() * RACE_BACKOFF_MS * attempt);
      }
    });
  }

  async head(): Promise<number> {
    return (await readerEnd(this.#options)).seq;
  }

  async read(
    after: number,
    limit: number,
  ): Promise<{ entries: StreamEntry[]; through: number; head: number }> {
    const head = await this.head();
    const through = Math.min(head, after + limit);
    const entries: StreamEntry[] = [];
    for (let from = after + 1; from <= through; ) {
      const partitionEnd = (Math.floor(from / STREAM_PARTITION_SIZE) + 1) * STREAM_PARTITION_SIZE;
      const to = Math.min(through, partitionEnd - 1);
      // The chunk holding `from` starts at most MAX_EVENTS - 1 places before it.
      const lowest = Math.max(from - MAX_EVENTS + 1, partitionEnd - STREAM_PARTITION_SIZE);
      for (const chunk of await this.#chunks(streamPartition(from), lowest, to)) {
        for (const [index, event] of chunk.events.entries()) {
          const seq = chunk.firstSeq + index;
          if (seq >= from && seq <= to) entries.push({ seq, recordedAt: chunk.recordedAt, event });
        }
      }
      from = to + 1;
    }
    return { entries, through: Math.max(after, through), head };
  }

  async placeAt(time: Date): Promise<number> {
    const { seq: head, at } = await readerEnd(this.#options);
    const target = time.getTime();
    if (head === 0 || at < target) return head + 1;
    // Places and their times both only grow (one writer, a clock it never lets go back), so
    // the first place at or after `time` is found by halving: about 30 reads for a billion.
    // A place whose chunk is gone has expired, so it is older than anything that has not.
    let low = 1;
    let high = head;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const recorded = await this.#recordedAt(middle);
      if (recorded !== undefined && recorded >= target) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  appended(signal: AbortSignal): Promise<void> {
    return nextWake(streamTopic(this.#options), signal);
  }

  /** Chunks of one partition whose first place is within [from, to], in order. */
  async #chunks(partition: string, from: number, to: number) {
    const { client, tableName } = this.#options;
    const items = await guard("stream.read", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: {
          ":pk": partition,
          ":from": streamChunkKey(from).sk,
          ":to": streamChunkKey(to).sk,
        },
        ConsistentRead: true,
      }),
    );
    return items.map(chunkOf);
  }

  async #recordedAt(seq: number): Promise<number | undefined> {
    const { client, tableName } = this.#options;
    const { Items } = await guard("stream.read", tableName, () =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND sk <= :at",
          ExpressionAttributeValues: {
            ":pk": streamPartition(seq),
            ":at": streamChunkKey(seq).sk,
          },
          ScanIndexForward: false,
          Limit: 1,
          ConsistentRead: true,
          ProjectionExpression: "recordedAt, lastSeq",
        }),
      ),
    );
    const chunk = Items?.[0];
    return chunk && Number(chunk.lastSeq) >= seq ? Date.parse(String(chunk.recordedAt)) : undefined;
  }
}

export const streamTopic = (options: DynamoStoreOptions) => `${options.tableName}\nSTREAM`;

/** A chunk holding places first..first + events - 1 (its `lastSeq` is set apart where it holds none). */
export function chunkItem(
  first: number,
  events: unknown[],
  at: number,
  retentionSeconds: number,
): Record<string, unknown> {
  return {
    ...streamChunkKey(first),
    firstSeq: first,
    lastSeq: first + events.length - 1,
    ...encodeJsonFields({ events }, CHUNK_JSON_FIELDS, { compress: true }),
    recordedAt: new Date(at).toISOString(),
    expiresAt: Math.floor(at / 1000) + retentionSeconds,
  };
}

/** A stored chunk's events as written, not checked: what the sole writer puts again. */
export function rawChunkEvents(item: Record<string, unknown>): unknown[] {
  const { events } = decodeJsonFields(item, CHUNK_JSON_FIELDS);
  return Array.isArray(events) ? events : [];
}

function chunkOf(item: Record<string, unknown>) {
  return {
    firstSeq: Number(item.firstSeq),
    lastSeq: Number(item.lastSeq),
    recordedAt: String(item.recordedAt),
    events: parseStored(
      storedChunk,
      { events: decodeJsonFields(item, CHUNK_JSON_FIELDS).events },
      "stream chunk",
    ).events,
  };
}

/** The partition each table's readers last found the stream's end in: where they look first. */
const readerPartitions = perTable(() => ({ partition: -1 }));

/**
 * Where the stream ends, for a reader (who polls it): the newest chunk of the partition it was
 * found in last time, one Query, while that chunk does not end the partition; else, as a
 * writer finds it, from the head. A stale answer is only an earlier end, which is safe.
 */
async function readerEnd(options: DynamoStoreOptions): Promise<StreamEnd> {
  const known = readerPartitions(options);
  if (known.partition >= 0) {
    const newest = await newestChunk(options, known.partition);
    const partitionLast = (known.partition + 1) * STREAM_PARTITION_SIZE - 1;
    if (newest && newest.lastSeq < partitionLast) {
      return { seq: newest.lastSeq, at: newest.at, partition: known.partition };
    }
  }
  const end = await readEnd(options);
  if (end.seq > 0) known.partition = partitionOf(end.seq);
  return end;
}

/** Where the stream ends, read strongly: the head's partition, then its newest chunk. */
export async function readEnd(options: DynamoStoreOptions): Promise<StreamEnd> {
  const { Item: head } = await options.client.send(
    new GetCommand({ TableName: options.tableName, Key: STREAM_HEAD_KEY, ConsistentRead: true }),
  );
  // A head written by an earlier release holds the last place (`seq`) and its time.
  const legacy = {
    seq: Number(head?.seq ?? 0),
    at: head?.at === undefined ? 0 : Date.parse(String(head.at)),
  };
  const named = head?.partition === undefined ? -1 : Number(head.partition);
  const partition = Math.max(named, head?.seq === undefined ? -1 : partitionOf(legacy.seq));
  if (partition < 0) return { seq: 0, at: 0, partition };
  // The newest chunk is in the named partition, or in the one before while the writer that
  // named it has not written its chunk yet.
  for (const candidate of [partition, partition - 1]) {
    if (candidate < 0) break;
    const newest = await newestChunk(options, candidate);
    if (newest) {
      return {
        seq: Math.max(newest.lastSeq, legacy.seq),
        at: Math.max(newest.at, legacy.at),
        partition: named,
      };
    }
  }
  // Every chunk has expired: go on after the last place known, or from the next partition.
  return {
    seq: Math.max(legacy.seq, named < 0 ? 0 : (named + 1) * STREAM_PARTITION_SIZE - 1),
    at: legacy.at,
    partition: named,
  };
}

export const partitionOf = (seq: number) => Math.floor(seq / STREAM_PARTITION_SIZE);

async function newestChunk(
  options: DynamoStoreOptions,
  partition: number,
): Promise<{ lastSeq: number; at: number } | undefined> {
  const { Items } = await options.client.send(
    new QueryCommand({
      TableName: options.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": streamPartition(partition * STREAM_PARTITION_SIZE) },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
      ProjectionExpression: "lastSeq, recordedAt",
    }),
  );
  const newest = Items?.[0];
  return newest
    ? { lastSeq: Number(newest.lastSeq), at: Date.parse(String(newest.recordedAt)) }
    : undefined;
}

/**
 * Names a partition as the newest before its first chunk is written, so a reader of the head
 * finds that chunk; never moves the name back (a writer that finds it further on leaves it).
 */
export async function namePartition(options: DynamoStoreOptions, partition: number): Promise<void> {
  try {
    await options.client.send(
      new UpdateCommand({
        TableName: options.tableName,
        Key: STREAM_HEAD_KEY,
        UpdateExpression: "SET #partition = :partition",
        ConditionExpression: "attribute_not_exists(#partition) OR #partition < :partition",
        ExpressionAttributeNames: { "#partition": "partition" },
        ExpressionAttributeValues: { ":partition": partition },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

async function commit(
  options: DynamoStoreOptions,
  pending: Pending[],
): Promise<ItemOutcome<void>[]> {
  const memory = memories(options);
  const done = pending.map((): ItemOutcome<void> => ({ ok: true, value: undefined }));
  try {
    memory.state ??= await readEnd(options);
    const state = memory.state;
    const seen = new Set<string>();
    const fresh = pending.filter(({ event }) => {
      if (memory.keys.has(event.eventKey) || seen.has(event.eventKey)) return false;
      seen.add(event.eventKey);
      return true;
    });
    if (fresh.length === 0) return done;
    // Times never go back, even if the clock does: a place's time is at least its predecessor's.
    const at = Math.max((options.now?.() ?? new Date()).getTime(), state.at);
    const retention = Math.max(...fresh.map((item) => item.retentionSeconds));
    const first = state.seq + 1;
    const last = first + fresh.length - 1;
    // A chunk never spans two partitions: split where one ends.
    const boundary = (partitionOf(first) + 1) * STREAM_PARTITION_SIZE;
    const splitAt = last >= boundary ? boundary - first : fresh.length;
    for (const [start, end] of [
      [0, splitAt],
      [splitAt, fresh.length],
    ] as const) {
      if (start >= end) continue;
      const partition = partitionOf(first + start);
      if (partition > state.partition) {
        await namePartition(options, partition);
        state.partition = partition;
      }
      const chunk = fresh.slice(start, end);
      await options.client.send(
        new PutCommand({
          TableName: options.tableName,
          Item: chunkItem(
            first + start,
            chunk.map((item) => item.event),
            at,
            retention,
          ),
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      // Written, so visible: a commit that fails after this never appends these again.
      for (const { event } of chunk) remember(memory.keys, event.eventKey);
      state.seq = first + end - 1;
      state.at = at;
    }
    wakeFollowers(streamTopic(options));
    return done;
  } catch (error) {
    // Where the stream ends is unknown now (another writer took the place): read it next time.
    memory.state = undefined;
    return pending.map(() => ({ ok: false, error }));
  }
}

function remember(keys: Set<string>, key: string): void {
  keys.add(key);
  if (keys.size > REMEMBERED_KEYS) {
    const oldest = keys.values().next();
    if (!oldest.done) keys.delete(oldest.value);
  }
}
