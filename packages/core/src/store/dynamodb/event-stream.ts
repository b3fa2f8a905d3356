import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type RunEvent, runEvent } from "../../model/events";
import type { EventStream, StreamEntry } from "../../ports";
import { GroupCommit, type ItemOutcome } from "../../util/group-commit";
import { inPool } from "../../util/in-pool";
import { type DynamoStoreOptions, guard, parseStored, queryAll } from "./client";
import { nextWake, wakeFollowers } from "./followers";
import { STREAM_HEAD_KEY, STREAM_PARTITION_SIZE, streamEntryKey, streamSeqOf } from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";
import { LOG_JSON_FIELDS } from "./log-requests";
import { perTable } from "./per-table";

/** Events one commit takes: a place each, then one move of the head. */
const MAX_EVENTS = 200;
const MAX_BYTES = 4_000_000;
/** Entries written at once within a commit. */
const CONCURRENT_PUTS = 16;
/** Event keys a writer remembers, so an event the bus hands over twice is appended once. */
const REMEMBERED_KEYS = 20_000;

interface Pending {
  event: RunEvent;
  retentionSeconds: number;
}

/** What the writer knows: the committed head, where entries end, the last time, recent keys. */
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

/**
 * One commit at a time per process: places are handed out in order, so a later commit never
 * lands before an earlier one. Across processes, one writer is the deployment's job (a FIFO
 * queue with one group feeds the stream's function); a second writer that races anyway finds
 * its places taken (conditional puts) or the head moved (conditional update) and fails.
 */
const streamWriter = perTable(
  (options): GroupCommit<Pending, void> =>
    new GroupCommit((pending) => commit(options, pending), {
      maxItems: MAX_EVENTS,
      maxBytes: MAX_BYTES,
      sizeOf: (item) => JSON.stringify(item.event.detail).length,
      maxInFlight: 1,
    }),
);

/**
 * The stage's events in one order: entries are written first (each at a free place), then the
 * head (STREAM / HEAD) moves past them, and readers read only up to the head. So a reader never
 * sees a place filled while an earlier one is still being written, and a reader that has read
 * up to a place has seen everything before it: no settle window, no gap.
 *
 * A writer that fails between the entries and the head leaves entries past the head; the next
 * writer starts after them and its commit makes them visible, and the bus delivers the failed
 * events again: at least once, like every other delivery here (events carry their eventKey).
 * Entries expire `retentionDays` after they were recorded.
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
    await guard("stream.append", this.#options.tableName, () =>
      Promise.all(
        events.map((event) => writer.submit({ event, retentionSeconds: this.#retentionSeconds })),
      ),
    );
  }

  async head(): Promise<number> {
    return (await readHead(this.#options)).seq;
  }

  async read(
    after: number,
    limit: number,
  ): Promise<{ entries: StreamEntry[]; through: number; head: number }> {
    const { client, tableName } = this.#options;
    const head = await this.head();
    const through = Math.min(head, after + limit);
    const entries: StreamEntry[] = [];
    for (let from = after + 1; from <= through; ) {
      const partitionEnd = (Math.floor(from / STREAM_PARTITION_SIZE) + 1) * STREAM_PARTITION_SIZE;
      const to = Math.min(through, partitionEnd - 1);
      const items = await guard("stream.read", tableName, () =>
        queryAll(client, {
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
          ExpressionAttributeValues: {
            ":pk": streamEntryKey(from).pk,
            ":from": streamEntryKey(from).sk,
            ":to": streamEntryKey(to).sk,
          },
          ConsistentRead: true,
        }),
      );
      for (const item of items) entries.push(entryOf(item));
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
    // A place read as missing has expired, so it is older than anything that has not.
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

  async #recordedAt(seq: number): Promise<number | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("stream.read", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: streamEntryKey(seq),
          ProjectionExpression: "recordedAt",
          ConsistentRead: true,
        }),
      ),
    );
    return Item ? Date.parse(String(Item.recordedAt)) : undefined;
  }
}

const streamTopic = (options: DynamoStoreOptions) => `${options.tableName}\nSTREAM`;

function entryOf(item: Record<string, unknown>): StreamEntry {
  return {
    seq: streamSeqOf(String(item.sk)),
    recordedAt: String(item.recordedAt),
    event: parseStored(runEvent, decodeJsonFields(item, LOG_JSON_FIELDS), "event"),
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

/** Where the last writer's entries end: past the head when it failed before moving it. */
async function readState(options: DynamoStoreOptions): Promise<WriterState> {
  const head = await readHead(options);
  let end = head.seq;
  // A commit is at most MAX_EVENTS places, so leftovers are in the head's partition or the next.
  for (const seq of [head.seq + 1, head.seq + 1 + MAX_EVENTS]) {
    const { Items } = await options.client.send(
      new QueryCommand({
        TableName: options.tableName,
        KeyConditionExpression: "pk = :pk AND sk > :after",
        ExpressionAttributeValues: {
          ":pk": streamEntryKey(seq).pk,
          ":after": streamEntryKey(head.seq).sk,
        },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
        ProjectionExpression: "sk",
      }),
    );
    const last = Items?.[0];
    if (last) end = Math.max(end, streamSeqOf(String(last.sk)));
  }
  return { committed: head.seq, end, at: head.at };
}

async function commit(
  options: DynamoStoreOptions,
  pending: Pending[],
): Promise<ItemOutcome<void>[]> {
  const memory = memories(options);
  const done = pending.map((): ItemOutcome<void> => ({ ok: true, value: undefined }));
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
    const first = state.end + 1;
    await inPool(fresh, CONCURRENT_PUTS, ({ event, retentionSeconds }, index) =>
      options.client.send(
        new PutCommand({
          TableName: options.tableName,
          Item: {
            ...streamEntryKey(first + index),
            ...encodeJsonFields(event, LOG_JSON_FIELDS),
            recordedAt,
            expiresAt: Math.floor(at / 1000) + retentionSeconds,
          },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
    const last = first + fresh.length - 1;
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
    // What reached the table is unknown: the next commit reads where the stream stands.
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
