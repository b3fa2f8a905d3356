import type { HttpClient } from "@toolbus/core/outbound";
import { failureFromStatus } from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";
import { type FoundEvent, plainText } from "./events";
import { IcsFormatError, type Occurrence, occurrencesInWindow, parseIcs } from "./ics";
import { civilFromUtcMs, dateKey, isoUtc } from "./time";
import { send } from "./upstream";

/** Public calendars of a busy group stay well under this; a larger body is not a calendar. */
export const ICS_MAX_BYTES = 4 * 1024 * 1024;

export interface IcsFeedRequest {
  url: string;
  /** Position in the configured list: names events that have no UID. */
  index: number;
  /** How many feeds are configured, for the feed's label. */
  count: number;
  timeMin: number;
  timeMax: number;
  limit: number;
  http: HttpClient;
  signal: AbortSignal;
}

export interface IcsFeedEvents {
  /** X-WR-CALNAME when the feed names itself. */
  name?: string;
  events: FoundEvent[];
  notes: string[];
}

/**
 * Names a feed by host only: private feed URLs (Google's "secret address in iCal format")
 * carry their credential in the path, which must not reach an agent. With several feeds,
 * their position tells apart two on the same host.
 */
export function feedLabel(url: string, index = 0, count = 1): string {
  let host = "";
  try {
    host = new URL(url).host;
  } catch {
    // Settings validation keeps this from happening; the label still must not throw.
  }
  const name = count > 1 ? `ICS feed ${index + 1}` : "ICS feed";
  if (!host) return name;
  return count > 1 ? `${name} (${host})` : `${name} ${host}`;
}

export async function fetchIcsFeed(request: IcsFeedRequest): Promise<IcsFeedEvents> {
  const label = feedLabel(request.url, request.index, request.count);
  const response = await send(label, request.http, request.url, {
    headers: { accept: "text/calendar, text/plain;q=0.5, */*;q=0.1" },
    retries: 1,
    maxBytes: ICS_MAX_BYTES,
    signal: request.signal,
  });
  const failure = failureFromStatus(response, label);
  if (failure) throw failure;
  let calendar: ReturnType<typeof parseIcs>;
  try {
    calendar = parseIcs(response.body);
  } catch (error) {
    if (!(error instanceof IcsFormatError)) throw error;
    throw new ToolFailure(
      Failures.upstreamError(`${label} is not a readable iCalendar file: ${error.message}`, {
        retryable: false,
      }),
      { cause: error },
    );
  }
  const { occurrences, notes } = occurrencesInWindow(calendar, {
    windowStart: request.timeMin,
    windowEnd: request.timeMax,
    // One more than asked for, so the caller can tell the list was cut.
    limit: request.limit + 1,
  });
  return {
    ...(calendar.name ? { name: calendar.name } : {}),
    events: occurrences.map((occurrence, i) => toFoundEvent(occurrence, request.index, i)),
    notes: notes.map((note) => `${label}: ${note}`),
  };
}

function toFoundEvent(occurrence: Occurrence, feed: number, position: number): FoundEvent {
  const { event, startMs, endMs, allDay } = occurrence;
  const day = (ms: number) => dateKey(civilFromUtcMs(ms));
  const description = event.description === undefined ? undefined : plainText(event.description);
  const instance =
    occurrence.instanceMs === undefined
      ? ""
      : `_${allDay ? day(occurrence.instanceMs).replace(/-/g, "") : compactUtc(occurrence.instanceMs)}`;
  // Without a UID nothing identifies the event across fetches; its place in the feed will do.
  const id = event.uid === undefined ? `ics-${feed}-${position}` : `${event.uid}${instance}`;
  return {
    startMs,
    ...(event.uid === undefined ? {} : { uid: event.uid }),
    event: {
      id,
      title: event.summary ?? "(no title)",
      start: allDay ? day(startMs) : isoUtc(startMs),
      end: allDay ? day(endMs) : isoUtc(endMs),
      allDay,
      ...(occurrence.timeZone && !allDay ? { timeZone: occurrence.timeZone } : {}),
      ...(event.location ? { location: event.location } : {}),
      ...(description ? { description } : {}),
      ...(event.url ? { url: event.url } : {}),
      source: "ics",
    },
  };
}

/** 20260120T180000Z, the form Google uses for instance ids. */
function compactUtc(ms: number): string {
  return isoUtc(ms).replace(/[-:]/g, "");
}
