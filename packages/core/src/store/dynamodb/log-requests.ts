import type { CallRecord } from "@toolbus/wire/model/call";
import { progressStepOf, type RunEvent } from "@toolbus/wire/model/events";
import { logSeqOf } from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";

/** A call's events to log, in order, none of them logged yet as far as the caller knows. */
export interface LogRequest {
  call: CallRecord;
  events: RunEvent[];
  /** Who logs them, where the process that finished the call does (EventLog.append). */
  finisher?: Finisher;
}

/**
 * A call's finisher logging its events: `alone` when it announced them all itself, together
 * (nobody else was told of any), `after-others` when some went out earlier to the recorder.
 */
export type Finisher = "alone" | "after-others";

/** The detail types a call announces once: its record keeps where each sits in the log. */
export type OnceDetailType = Exclude<RunEvent["detailType"], "ToolCallProgress">;

/** Where each once-only detail type's place in the log is kept on the call record. */
export const LOG_SEQ_ATTRIBUTE = {
  ToolCallScheduled: "scheduledLogSeq",
  ToolResultReceived: "resultLogSeq",
  ToolCallApprovalRequested: "approvalLogSeq",
} as const satisfies Record<OnceDetailType, keyof CallRecord>;

/** The step of a progress event of this call (0 when its key is not a progress key). */
export function progressStep(call: CallRecord, event: RunEvent): number {
  return progressStepOf(event.eventKey, call.parentRunId, call.callId) ?? 0;
}

/**
 * What of `events` the call record does not show logged, in the order the log wants: each
 * once-only event once (and not if marked), progress steps counting up past the last logged
 * one and none once the result is logged, every progress step before the result.
 */
export function unloggedEvents(call: CallRecord, events: RunEvent[]): RunEvent[] {
  const resultLogged = call.resultLogSeq !== undefined || call.resultPublishedAt !== undefined;
  let lastStep = call.progressLogStep ?? 0;
  const seen = new Set<string>();
  const kept: RunEvent[] = [];
  for (const event of events) {
    if (event.detailType === "ToolCallProgress") {
      const step = progressStep(call, event);
      if (resultLogged || step <= lastStep) continue;
      lastStep = step;
    } else {
      if (call[LOG_SEQ_ATTRIBUTE[event.detailType]] !== undefined) continue;
      if (seen.has(event.detailType)) continue;
      seen.add(event.detailType);
    }
    kept.push(event);
  }
  // Progress is reported while the call runs: a step arriving with its result goes first.
  return [
    ...kept.filter((event) => event.detailType !== "ToolResultReceived"),
    ...kept.filter((event) => event.detailType === "ToolResultReceived"),
  ];
}

/**
 * An event's detail carries a call's input or result: JSON text (see json-text.ts), deflated
 * when that is smaller. A result's entry is then about half its size: one write unit where
 * its text took two (twice that in the log writer's transaction).
 */
export const LOG_JSON_FIELDS = ["detail"];

/** An event's attributes as its run-log entry keeps them (read with decodeJsonFields). */
export const logEntryFields = (event: RunEvent): Record<string, unknown> =>
  encodeJsonFields(event, LOG_JSON_FIELDS, { compress: true });

/**
 * Several consecutive events of one call kept in one entry (one item): keyed by the place of
 * its first event, the place of its last under `last`, the events as a JSON array under
 * `events` (text or deflated, as LOG_JSON_FIELDS). Keyed by its first place, the entry claims
 * the very slot that any other writer appending after the same view of the run claims (see
 * log-writer.ts): keyed by its last, a writer with a stale view could put a lone event inside
 * its range. The events' keys are not kept beside them: a list of a synchronous call's two
 * keys (about 200 bytes with their run and call ids) takes the entry past 1 KB, a second
 * write unit, twice in a transaction; the one reader that wants only keys (the sole writer's
 * recovery read) inflates the events instead.
 */
export const LOG_EVENTS_FIELDS = ["events"];
/** Where a multi-event entry's last event sits in the log (its sort key names the first). */
export const LOG_LAST_ATTRIBUTE = "last";

/**
 * The most JSON text (UTF-8 bytes, before deflating) a call's events may take to go in one
 * entry: far under an item's 400 KB. Events past it (a result near its cap) go one entry each,
 * as a lone event always does.
 */
export const MAX_GROUPED_EVENTS_BYTES = 64 * 1024;

/** One run-log entry to write: the place of its first event (its key), its attributes and events. */
export interface LogEntry {
  first: number;
  fields: Record<string, unknown>;
  events: RunEvent[];
}

/**
 * The entries for one call's events placed from `first` on, in order: two or more whose JSON
 * stays within MAX_GROUPED_EVENTS_BYTES share one entry (one item, and one write unit where a
 * result's entry and its scheduling's took one each, twice that in the log writer's
 * transaction); a lone event, or events over the bound, go one entry each, in the single-event
 * form. Writing grouped entries is safe because the release before this one already reads
 * them and finds a run's end from an entry's `last`: during a deploy, or after a rollback to
 * it, no process misreads such an entry or appends inside its range. Every reader still reads
 * the single-event form too, which older entries (and lone events) keep.
 */
export function logEntries(events: RunEvent[], first: number): LogEntry[] {
  if (sharesOneEntry(events)) {
    return [
      {
        first,
        fields: {
          [LOG_LAST_ATTRIBUTE]: first + events.length - 1,
          ...encodeJsonFields({ events }, LOG_EVENTS_FIELDS, { compress: true }),
        },
        events,
      },
    ];
  }
  return events.map((event, index) => ({
    first: first + index,
    fields: logEntryFields(event),
    events: [event],
  }));
}

/** How many entries `logEntries` makes of a call's events. */
export function entryCount(events: RunEvent[]): number {
  return sharesOneEntry(events) ? 1 : events.length;
}

function sharesOneEntry(events: RunEvent[]): boolean {
  return (
    events.length >= 2 && Buffer.byteLength(JSON.stringify(events)) <= MAX_GROUPED_EVENTS_BYTES
  );
}

/**
 * The places a stored entry covers: first..last for a multi-event entry, its own place for any
 * other (a lone event, a skip entry); NaN for an entry that is not a LOG# one.
 */
export function entryRange(item: Record<string, unknown>): { first: number; last: number } {
  const first = logSeqOf(String(item.sk));
  const last = item[LOG_LAST_ATTRIBUTE];
  return {
    first,
    last: typeof last === "number" && Number.isInteger(last) && last >= first ? last : first,
  };
}

export const callKeyOf = (call: CallRecord) => `${call.parentRunId}\n${call.callId}`;

/** Requests for one call become one (a write names an item once), events in order, each once. */
export function mergeByCall(requests: LogRequest[]): LogRequest[] {
  const merged = new Map<string, LogRequest>();
  for (const request of requests) {
    const known = merged.get(callKeyOf(request.call));
    const events = [...(known?.events ?? []), ...request.events];
    // Only where every request for the call says the same does the merged one say who logs.
    const finisher = known && known.finisher !== request.finisher ? undefined : request.finisher;
    merged.set(callKeyOf(request.call), {
      call: request.call,
      events: unloggedEvents(request.call, events),
      ...(finisher && { finisher }),
    });
  }
  return [...merged.values()];
}

/** A progress step as the call record keeps its latest: what it said, and when. */
export function progressOf(event: RunEvent): NonNullable<CallRecord["progress"]> {
  const { progress, total, message, reportedAt } = event.detail as {
    progress: number;
    total?: number;
    message?: string;
    reportedAt: string;
  };
  return {
    progress,
    ...(total === undefined ? {} : { total }),
    ...(message === undefined ? {} : { message }),
    reportedAt,
  };
}

/** The keys of the events an entry holds: its own, or those of a multi-event entry's events. */
export function entryEventKeys(item: Record<string, unknown>): string[] {
  return entryEventStamps(item).map((stamp) => stamp.key);
}

/** The key and time (`occurredAt`, where the item has it) of each event an entry holds. */
export function entryEventStamps(
  item: Record<string, unknown>,
): { key: string; occurredAt: string | undefined }[] {
  if (typeof item.eventKey === "string") {
    return [{ key: item.eventKey, occurredAt: stringOr(item.occurredAt) }];
  }
  const { events } = decodeJsonFields(item, LOG_EVENTS_FIELDS);
  if (!Array.isArray(events)) return [];
  return events.flatMap((event) => {
    const { eventKey, occurredAt } = (event ?? {}) as { eventKey?: unknown; occurredAt?: unknown };
    return typeof eventKey === "string"
      ? [{ key: eventKey, occurredAt: stringOr(occurredAt) }]
      : [];
  });
}

const stringOr = (value: unknown) => (typeof value === "string" ? value : undefined);
