import type { CallRecord } from "@toolbus/wire/model/call";
import { type RunEvent, runEvent } from "@toolbus/wire/model/events";
import { ToolbusError, ValidationError } from "../../errors";
import type { EventLog, EventLogPage } from "../../ports";
import { type DynamoStoreOptions, guard, parseInput, parseStored, queryAll } from "./client";
import { nextWake, runTopic, wakeFollowers } from "./followers";
import {
  LOG_PREFIX,
  logPlaceKey,
  logPlaceOf,
  logSeqOf,
  logSortKey,
  runLogKeyCondition,
  runPartition,
} from "./items";
import { decodeJsonFields } from "./json-text";
import {
  entryRange,
  type Finisher,
  LOG_EVENTS_FIELDS,
  LOG_JSON_FIELDS,
  LOG_LAST_ATTRIBUTE,
  unloggedEvents,
} from "./log-requests";
import { logWriter } from "./log-writer";

export const DEFAULT_EVENT_PAGE = 100;
export const MAX_EVENT_PAGE = 1_000;

/** DynamoDB's limit for a sort key value, in bytes. */
const MAX_SORT_KEY_BYTES = 1_024;

/**
 * A run's events in the order they were logged: RUN#<runId> / LOG#<seq>, written by
 * log-writer.ts with no gaps (an entry holding several of a call's events covers their places,
 * keyed by the first). A reader's cursor is a place in that sequence and it never
 * passes a place that is still empty (a write in flight), so every reader gets every event
 * once, in the log's order, the moment it is stored: no settle window, and an event logged
 * late (a result the sweeper announces after a crash) simply comes last.
 */
export class DynamoEventLog implements EventLog {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async append(
    call: CallRecord,
    events: RunEvent[],
    { finisher }: { finisher?: Finisher } = {},
  ): Promise<void> {
    const parsed = events.map((event) => parseInput(runEvent, event, "event"));
    for (const event of parsed) checkTime(event.occurredAt);
    const unlogged = unloggedEvents(call, parsed);
    if (unlogged.length === 0) return;
    await guard("events.append", this.#options.tableName, () =>
      logWriter(this.#options).submit({ call, events: unlogged, ...(finisher && { finisher }) }),
    );
    wakeFollowers(this.#topic(call.parentRunId));
  }

  appended(parentRunId: string, signal: AbortSignal): Promise<void> {
    return nextWake(this.#topic(parentRunId), signal);
  }

  #topic(parentRunId: string): string {
    return runTopic(this.#options.tableName, parentRunId);
  }

  async read(
    parentRunId: string,
    options: { cursor?: string; limit?: number } = {},
  ): Promise<EventLogPage> {
    const { client, tableName } = this.#options;
    const limit = pageSize(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const place = after === undefined ? undefined : logPlaceOf(after);
    const items = await guard("events.read", tableName, () =>
      queryAll(
        client,
        {
          TableName: tableName,
          // In the sequence, from the key after the last entry read (LOG# keys are all one
          // length, so none sorts between); in an EVENT# log, after its last entry's key.
          ...runLogKeyCondition(
            parentRunId,
            place ? logSortKey(logSeqOf(place.key) + 1) : undefined,
          ),
          ExclusiveStartKey:
            after === undefined || place ? undefined : { pk: runPartition(parentRunId), sk: after },
          // Events are read right after the recorder wrote them.
          ConsistentRead: true,
        },
        limit,
      ),
    );
    // `limit` counts entries, as it did when each held one event: a page holds `limit` entries
    // at most, so more events than `limit` where entries hold several (a call's events
    // appended together: its start, last progress steps and result), and never ends inside an
    // entry. Fewer events than `limit` still means the reader is at the log's end (or at a
    // place still empty), which followers rely on.
    const { readable, end } = contiguous(items, place ? place.end : 0);
    const last = readable.at(-1);
    const lastKey = String(last?.sk);
    return {
      // Skip entries fill places a crash left empty (log-sole-writer.ts): passed over.
      events: readable.flatMap(logEntryEvents),
      // Where the reader is, even on the last page, so a follower polls on from there; with
      // nothing new it keeps the cursor it came with.
      cursor:
        last === undefined
          ? options.cursor
          : encodeCursor(
              lastKey.startsWith(LOG_PREFIX) ? logPlaceKey({ key: lastKey, end }) : lastKey,
            ),
    };
  }
}

/** The events an entry holds: none for a skip entry, several for a multi-event entry. */
export function logEntryEvents(item: Record<string, unknown>): RunEvent[] {
  if (item.skip === true) return [];
  if (!isMultiEvent(item)) {
    return [parseStored(runEvent, decodeJsonFields(item, LOG_JSON_FIELDS), "event")];
  }
  const { events } = decodeJsonFields(item, LOG_EVENTS_FIELDS);
  if (!Array.isArray(events)) {
    throw new ToolbusError("A stored event entry is not valid.", {
      context: { pk: item.pk, sk: item.sk },
    });
  }
  return events.map((event) =>
    parseStored(runEvent, { pk: item.pk, sk: item.sk, ...(event as object) }, "event"),
  );
}

const isMultiEvent = (item: Record<string, unknown>) =>
  item[LOG_LAST_ATTRIBUTE] !== undefined && String(item.sk).startsWith(LOG_PREFIX);

/**
 * The entries up to the first place still empty, and the last place they cover (`end`, from
 * the place read before them): a transaction in flight may show a later entry before an
 * earlier one, and a reader that passed the empty place would never see it. An entry covers
 * the places of its events (entryRange): a multi-event entry leaves no gap between its first
 * and its last.
 *
 * No release that writes multi-event entries runs beside one that cannot read them (stages
 * take releases in turn: docs/deploying.md, Upgrades), so no entry is ever written at a place
 * another covers. Were one there, it would be read in key order rather than taken for a gap,
 * so the log would not stop at it; but a reader could then pass a place still being written
 * inside the range, which is why the order of releases matters.
 */
function contiguous(
  items: Record<string, unknown>[],
  readTo: number,
): { readable: Record<string, unknown>[]; end: number } {
  let end = readTo;
  const readable: Record<string, unknown>[] = [];
  for (const item of items) {
    if (String(item.sk).startsWith(LOG_PREFIX)) {
      const { first, last } = entryRange(item);
      if (first > end + 1) break;
      end = Math.max(end, last);
    }
    readable.push(item);
  }
  return { readable, end };
}

/**
 * Cursors are base64url of the last returned sort key (followed, past a multi-event entry, by
 * `#` and the last place read: see logPlaceKey): opaque to callers, meaningful only within the
 * run they came from.
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
  const place = logPlaceOf(sortKey);
  const inSequence =
    place !== undefined &&
    logSeqOf(place.key) > 0 &&
    place.end >= logSeqOf(place.key) &&
    Number.isSafeInteger(place.end);
  if (!(legacy || inSequence) || Buffer.byteLength(sortKey) > MAX_SORT_KEY_BYTES) {
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
