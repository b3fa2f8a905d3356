import type { CallRecord } from "@toolbus/wire/model/call";
import { type RunEvent, runEvent } from "@toolbus/wire/model/events";
import { ValidationError } from "../../errors";
import type { EventLog, EventLogPage } from "../../ports";
import { type DynamoStoreOptions, guard, parseInput, parseStored, queryAll } from "./client";
import { nextWake, wakeFollowers } from "./followers";
import { LOG_PREFIX, logSeqOf, runLogKeyCondition, runPartition } from "./items";
import { decodeJsonFields } from "./json-text";
import { LOG_JSON_FIELDS, unloggedEvents } from "./log-requests";
import { logWriter } from "./log-writer";

export const DEFAULT_EVENT_PAGE = 100;
export const MAX_EVENT_PAGE = 1_000;

/** DynamoDB's limit for a sort key value, in bytes. */
const MAX_SORT_KEY_BYTES = 1_024;

/**
 * A run's events in the order they were logged: RUN#<runId> / LOG#<seq>, written by
 * log-writer.ts with no gaps. A reader's cursor is a place in that sequence and it never
 * passes a place that is still empty (a write in flight), so every reader gets every event
 * once, in the log's order, the moment it is stored: no settle window, and an event logged
 * late (a result the sweeper announces after a crash) simply comes last.
 */
export class DynamoEventLog implements EventLog {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async append(call: CallRecord, events: RunEvent[]): Promise<void> {
    const parsed = events.map((event) => parseInput(runEvent, event, "event"));
    for (const event of parsed) checkTime(event.occurredAt);
    const unlogged = unloggedEvents(call, parsed);
    if (unlogged.length === 0) return;
    await guard("events.append", this.#options.tableName, () =>
      logWriter(this.#options).submit({ call, events: unlogged }),
    );
    wakeFollowers(this.#topic(call.parentRunId));
  }

  appended(parentRunId: string, signal: AbortSignal): Promise<void> {
    return nextWake(this.#topic(parentRunId), signal);
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
          ...runLogKeyCondition(parentRunId),
          ExclusiveStartKey: after === undefined ? undefined : { pk, sk: after },
          // Events are read right after the recorder wrote them.
          ConsistentRead: true,
        },
        limit,
      ),
    );
    const readable = contiguous(items, after);
    const last = readable.at(-1);
    return {
      // Skip entries fill places a crash left empty (log-sole-writer.ts): passed over.
      events: readable
        .filter((item) => item.skip !== true)
        .map((item) => parseStored(runEvent, decodeJsonFields(item, LOG_JSON_FIELDS), "event")),
      // The position of the last event seen, even on the last page, so a follower polls on
      // from there; with nothing new it keeps the cursor it came with.
      cursor: last === undefined ? options.cursor : encodeCursor(String(last.sk)),
    };
  }
}

/**
 * The entries up to the first place still empty: a transaction in flight may show a later
 * entry before an earlier one, and a reader that passed the empty place would never see it.
 */
function contiguous(
  items: Record<string, unknown>[],
  after: string | undefined,
): Record<string, unknown>[] {
  let expected = after?.startsWith(LOG_PREFIX) ? logSeqOf(after) + 1 : 1;
  const readable: Record<string, unknown>[] = [];
  for (const item of items) {
    const sortKey = String(item.sk);
    if (sortKey.startsWith(LOG_PREFIX)) {
      if (logSeqOf(sortKey) !== expected) break;
      expected += 1;
    }
    readable.push(item);
  }
  return readable;
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
  // A place in an EVENT# log (remove after 2027-03-31, with the read in items.ts).
  const legacy = /^EVENT#[^#]+#./s.test(sortKey);
  if (!(legacy || logSeqOf(sortKey) > 0) || Buffer.byteLength(sortKey) > MAX_SORT_KEY_BYTES) {
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

/** Readers show when each event happened: an entry without a real time is refused. */
function checkTime(occurredAt: string): void {
  if (Number.isNaN(Date.parse(occurredAt))) {
    throw new ValidationError("The event's occurredAt is not a valid timestamp.", {
      details: { occurredAt },
    });
  }
}
