import { setTimeout as delay } from "node:timers/promises";
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
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
const MAX_EVENTS = 200;
/** A chunk's events as JSON text, under DynamoDB's 400 KB item limit with room to spare. */
const MAX_CHUNK_BYTES = 300_000;
/** Event keys a writer remembers, so an event the bus hands over twice is appended once. */
const REMEMBERED_KEYS = 20_000;
/**
 * How often an append is tried when another writer wins the race for the head, and the most
 * it waits (times the attempt, at random) before the next: writers fed from separate shards
 * of the table's change stream rarely commit at the same moment.
 */
const RACE_ATTEMPTS = 5;
const RACE_BACKOFF_MS = 20;

interface Pending {
  event: RunEvent;
  retentionSeconds: number;
}

/** What the writer knows: the committed head, where chunks end, the last time, recent keys. */
interface WriterState {
  committed: number;
  end: number;
  at: number;
}

interface WriterMemory {
  state: WriterState | undefined;
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
 * lands before an earlier one. Across processes writers take turns on the head: on AWS the
 * table's change stream feeds one invocation per shard at a time, so a stage with several
 * shards has several writers. One that finds the head moved (a conditional update) or its
 * chunk's place taken (a conditional put) takes its chunk back and appends again after the
 * winner (append).
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
 * and last place, the events as JSON text, deflated), then moves the head (STREAM / HEAD) past
 * them; readers read only up to the head. So a reader never sees a place filled while an
 * earlier one is still being written, and a reader that has read up to a place has seen
 * everything before it: no settle window, no gap. Two writes per commit, however many events
 * it holds.
 *
 * A writer that fails between its chunk and the head leaves a chunk past the head; the next
 * writer starts after it and its commit makes it visible, and the bus delivers the failed
 * events again: at least once, like every other delivery here (events carry their eventKey).
 * Chunks expire `retentionDays` after they were recorded.
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
      for (let attempt = 1; ; attempt++) {
        const outcomes = await Promise.allSettled(
          events.map((event) => writer.submit({ event, retentionSeconds: this.#retentionSeconds })),
        );
        const failed = outcomes.find((outcome) => outcome.status === "rejected");
        if (!failed) return;
        // A writer that lost a race to another has taken its chunks back and forgotten where
        // the stream stood: it appends again after the winner. What was committed before is
        // remembered by key and not appended twice.
        if (!isConditionFailure(failed.reason) || attempt >= RACE_ATTEMPTS) throw failed.reason;
        await delay(Math.random() * RACE_BACKOFF_MS * attempt);
      }
    });
  }

  async head(): Promise<number> {
    return (await readHead(this.#options)).seq;
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
    const { seq: head, at } = await readHead(this.#options);
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

const streamTopic = (options: DynamoStoreOptions) => `${options.tableName}\nSTREAM`;

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

/** The committed head and its time, read strongly. */
async function readHead(options: DynamoStoreOptions): Promise<{ seq: number; at: number }> {
  const { Item } = await guard("stream.read", options.tableName, () =>
    options.client.send(
      new GetCommand({ TableName: options.tableName, Key: STREAM_HEAD_KEY, ConsistentRead: true }),
    ),
  );
  return { seq: Number(Item?.seq ?? 0), at: Item ? Date.parse(String(Item.at)) : 0 };
}

/** Where the last writer's chunks end: past the head when it failed before moving it. */
async function readState(options: DynamoStoreOptions): Promise<WriterState> {
  const head = await readHead(options);
  let end = head.seq;
  // A chunk left past the head starts right after it: in the head's partition or the next.
  for (const seq of [head.seq + 1, head.seq + 1 + MAX_EVENTS]) {
    const { Items } = await options.client.send(
      new QueryCommand({
        TableName: options.tableName,
        KeyConditionExpression: "pk = :pk AND sk > :after",
        ExpressionAttributeValues: {
          ":pk": streamPartition(seq),
          ":after": streamChunkKey(head.seq).sk,
        },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
        ProjectionExpression: "lastSeq",
      }),
    );
    const last = Items?.[0];
    if (last) end = Math.max(end, Number(last.lastSeq));
  }
  return { committed: head.seq, end, at: head.at };
}

async function commit(
  options: DynamoStoreOptions,
  pending: Pending[],
): Promise<ItemOutcome<void>[]> {
  const memory = memories(options);
  const done = pending.map((): ItemOutcome<void> => ({ ok: true, value: undefined }));
  const written: { pk: string; sk: string }[] = [];
  try {
    memory.state ??= await readState(options);
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
    const recordedAt = new Date(at).toISOString();
    const retention = Math.max(...fresh.map((item) => item.retentionSeconds));
    const first = state.end + 1;
    const last = first + fresh.length - 1;
    // A chunk never spans two partitions: split where one ends.
    const boundary = (Math.floor(first / STREAM_PARTITION_SIZE) + 1) * STREAM_PARTITION_SIZE;
    const splitAt = last >= boundary ? boundary - first : fresh.length;
    for (const [start, end] of [
      [0, splitAt],
      [splitAt, fresh.length],
    ] as const) {
      if (start >= end) continue;
      const key = streamChunkKey(first + start);
      await options.client.send(
        new PutCommand({
          TableName: options.tableName,
          Item: {
            ...key,
            firstSeq: first + start,
            lastSeq: first + end - 1,
            ...encodeJsonFields(
              { events: fresh.slice(start, end).map((item) => item.event) },
              CHUNK_JSON_FIELDS,
              { compress: true },
            ),
            recordedAt,
            expiresAt: Math.floor(at / 1000) + retention,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      written.push(key);
    }
    await options.client.send(
      new UpdateCommand({
        TableName: options.tableName,
        Key: STREAM_HEAD_KEY,
        UpdateExpression: "SET seq = :last, #at = :at",
        ConditionExpression: "attribute_not_exists(seq) OR seq = :committed",
        ExpressionAttributeNames: { "#at": "at" },
        ExpressionAttributeValues: {
          ":last": last,
          ":at": recordedAt,
          ":committed": state.committed,
        },
      }),
    );
    memory.state = { committed: last, end: last, at };
    for (const { event } of fresh) remember(memory.keys, event.eventKey);
    wakeFollowers(streamTopic(options));
    return done;
  } catch (error) {
    // What reached the table is unknown: the next commit reads where the stream stands. A
    // writer that lost a race takes its chunks back, so they never overlap the winner's.
    memory.state = undefined;
    if (isConditionFailure(error)) await takeBack(options, written);
    return pending.map(() => ({ ok: false, error }));
  }
}

async function takeBack(options: DynamoStoreOptions, keys: { pk: string; sk: string }[]) {
  for (const key of keys) {
    await options.client
      .send(new DeleteCommand({ TableName: options.tableName, Key: key }))
      .catch(() => undefined);
  }
}

function remember(keys: Set<string>, key: string): void {
  keys.add(key);
  if (keys.size > REMEMBERED_KEYS) {
    const oldest = keys.values().next();
    if (!oldest.done) keys.delete(oldest.value);
  }
}
