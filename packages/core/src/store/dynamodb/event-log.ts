import { EventEmitter } from "node:events";
import { ValidationError } from "../../errors";
import { type RunEvent, runEvent } from "../../model/events";
import type { EventLog, EventLogPage } from "../../ports";
import { batchPut } from "./batch-put";
import { type DynamoStoreOptions, guard, parseInput, parseStored, queryAll } from "./client";
import { EVENT_PREFIX, eventSortKey, runPartition } from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";

/** An event's detail carries a call's input or result: JSON text (see json-text.ts). */
const JSON_FIELDS = ["detail"];

export const DEFAULT_EVENT_PAGE = 100;

/** Appends made in this process, by table and run: followers here wake on them. */
const appends = new EventEmitter();
appends.setMaxListeners(0);
/** The last append per topic whose wake-up is still to come. */
const lastAppend = new Map<string, number>();

/**
 * Wakes a run's followers once its latest append is readable (after the settle window). A
 * burst of appends wakes them once, not once per event: each wake costs every follower a read.
 */
function wakeFollowers(topic: string, settleMs: number): void {
  const scheduled = lastAppend.has(topic);
  lastAppend.set(topic, Date.now());
  if (scheduled) return;
  const fire = () => {
    const readableAt = (lastAppend.get(topic) ?? 0) + settleMs;
    if (readableAt > Date.now()) {
      setTimeout(fire, readableAt - Date.now()).unref();
      return;
    }
    lastAppend.delete(topic);
    appends.emit(topic);
  };
  setTimeout(fire, settleMs).unref();
}
export const MAX_EVENT_PAGE = 1_000;

/** DynamoDB's limit for a sort key value, in bytes. */
const MAX_SORT_KEY_BYTES = 1_024;

/**
 * A run's events: RUN#<runId> / EVENT#<occurredAt>#<eventKey>, so one Query reads them in
 * order and the key itself makes an append idempotent: the same event appended again lands on
 * the same item. Appends arriving together are written together (see batch-put.ts), which is
 * what keeps the recorder cheap when every call brings two events.
 */
export class DynamoEventLog implements EventLog {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async append(parentRunId: string, event: RunEvent): Promise<void> {
    const parsed = parseInput(runEvent, event, "event");
    const sk = eventSortKey(normalizeTime(parsed.occurredAt), parsed.eventKey);
    await guard("events.append", this.#options.tableName, () =>
      batchPut(this.#options).submit({
        pk: runPartition(parentRunId),
        sk,
        ...encodeJsonFields(parsed, JSON_FIELDS),
      }),
    );
    wakeFollowers(this.#topic(parentRunId), this.#options.eventSettleMs ?? 0);
  }

  appended(parentRunId: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const topic = this.#topic(parentRunId);
      const done = () => {
        appends.off(topic, done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      appends.on(topic, done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * The run's events, or with a settle window only those that describe a moment at least that
   * long ago: events land out of order (calls finish and are recorded in any order), and a
   * reader that had passed an event's place would never see it. Ordering by the time an event
   * describes, a reader misses nothing stored within the window.
   */
  #keyCondition(pk: string) {
    const settle = this.#options.eventSettleMs ?? 0;
    if (settle <= 0) {
      return {
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": pk, ":prefix": EVENT_PREFIX },
      };
    }
    const horizon = new Date(Date.now() - settle).toISOString();
    return {
      KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
      ExpressionAttributeValues: {
        ":pk": pk,
        ":from": EVENT_PREFIX,
        ":to": `${EVENT_PREFIX}${horizon}`,
      },
    };
  }

  #topic(parentRunId: string): string {
    return `${this.#options.tableName}\n${parentRunId}`;
  }

  async read(
    parentRunId: string,
    options: { cursor?: string; limit?: number } = {},
  ): Promise<EventLogPage> {
    const { client, tableName } = this.#options;
    const limit = pageSize(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const pk = runPartition(parentRunId);
    const items = await guard("events.read", tableName, () =>
      queryAll(
        client,
        {
          TableName: tableName,
          ...this.#keyCondition(pk),
          ExclusiveStartKey: after === undefined ? undefined : { pk, sk: after },
          // Events are read right after the recorder wrote them.
          ConsistentRead: true,
        },
        limit,
      ),
    );
    const last = items.at(-1);
    return {
      events: items.map((item) =>
        parseStored(runEvent, decodeJsonFields(item, JSON_FIELDS), "event"),
      ),
      // The position of the last event seen, even on the last page, so a follower polls on
      // from there; with nothing new it keeps the cursor it came with.
      cursor: last === undefined ? options.cursor : encodeCursor(String(last.sk)),
    };
  }
}

/**
 * Cursors are base64url of the last returned sort key: opaque to callers, meaningful only
 * within the run they came from.
 */
export function encodeCursor(sortKey: string): string {
  return Buffer.from(sortKey, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): string {
  const invalid = () =>
    new ValidationError("The cursor is not valid; use one returned by a previous read.", {
      details: { cursor: cursor.slice(0, 100) },
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  const sortKey = Buffer.from(cursor, "base64url").toString("utf8");
  // Round-tripping rejects non-canonical padding bits and bytes that were not valid UTF-8.
  if (encodeCursor(sortKey) !== cursor) throw invalid();
  if (!/^EVENT#[^#]+#./s.test(sortKey) || Buffer.byteLength(sortKey) > MAX_SORT_KEY_BYTES) {
    throw invalid();
  }
  return sortKey;
}

function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_EVENT_PAGE;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError(`limit must be an integer from 1 to ${MAX_EVENT_PAGE}.`, {
      details: { limit },
    });
  }
  return Math.min(limit, MAX_EVENT_PAGE);
}

/**
 * Sort keys compare as strings, so every time in a key uses the one ISO form
 * (2026-01-02T03:04:05.678Z); "…05Z" and "…05.000Z" would otherwise sort apart.
 */
function normalizeTime(occurredAt: string): string {
  const time = new Date(occurredAt);
  if (Number.isNaN(time.getTime())) {
    throw new ValidationError("The event's occurredAt is not a valid timestamp.", {
      details: { occurredAt },
    });
  }
  return time.toISOString();
}
