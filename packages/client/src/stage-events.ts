import { stageEventPageView, typedRunEvent } from "@toolbus/wire/schemas";
import * as z from "zod";
import { type FollowOptions, type FollowState, followEvents } from "./follow.js";
import type { Transport } from "./http.js";
import type { RunEvent, StageEventsPage } from "./schemas.js";

/** The API's page of the stage's events, each event's detail checked by its detail type. */
const typedPage = stageEventPageView.extend({ events: z.array(typedRunEvent) });

const PATH = "/v1/events";

/** Which of the stage's events to read, and from where. */
export interface StageEventsQuery {
  /**
   * An EventBridge event pattern over Toolbus's events, the same as a subscription's: an
   * object or its JSON text. Absent: every event.
   */
  pattern?: Record<string, unknown> | string;
  /** Start after this cursor (a page's `cursor`, or an event's from the stream). */
  cursor?: string;
  /**
   * Start at the first event recorded at or after this time. Without it (and without
   * `cursor`) a reader starts at the end: it sees only what happens from then on.
   */
  since?: string | Date;
  /** Page size the server reads with (1-1000; its default is 100). */
  limit?: number;
}

export interface StageEventsPageOptions extends StageEventsQuery {
  signal?: AbortSignal;
}

export interface StageEventsOptions extends StageEventsQuery, FollowOptions {}

/** One event of the stage's stream and where to resume after it. */
export interface StageEvent {
  event: RunEvent;
  /**
   * Resuming from here gives every event after this one; it may give this one and a few
   * before it again (the server's cursor marks whole pages; events carry `eventKey`).
   */
  cursor: string;
}

/** The stage's events as they happen, from an async iterable that reconnects by itself. */
export interface StageEventStream extends AsyncIterable<StageEvent> {
  /** Where the stream is: the cursor to resume from, once it is open. */
  readonly cursor: string | undefined;
  /**
   * Fixes where the stream starts now instead of at the first read, and resolves to that
   * cursor: every event recorded after it resolves is in the stream. Iterating opens it too.
   */
  open(): Promise<string>;
}

/** One JSON page of the stage's events. */
export async function stageEventsPage(
  transport: Transport,
  options: StageEventsPageOptions,
): Promise<StageEventsPage> {
  const { signal } = options;
  return transport.json("GET", PATH, {
    query: {
      pattern: patternText(options.pattern),
      cursor: options.cursor,
      since: options.since instanceof Date ? options.since.toISOString() : options.since,
      limit: options.limit,
    },
    schema: typedPage,
    ...(signal ? { signal } : {}),
  }) as Promise<StageEventsPage>;
}

/**
 * Follows the stage's events over server-sent events. The server sends a cursor only with
 * events, so a stream that starts "now" and ends before anything matched would leave nothing
 * to reconnect from, and the reconnection would start at a later "now", skipping what was
 * recorded in between. Opening therefore reads one JSON page first (of one event, so the
 * cursor it gives is exact for that event) and every connection resumes from a cursor.
 */
export function stageEvents(transport: Transport, options: StageEventsOptions): StageEventStream {
  const state: FollowState = { cursor: options.cursor };
  const pattern = patternText(options.pattern);
  /** What the opening page held: given out before the stream's events, once. */
  let held: RunEvent[] = [];
  let opening: Promise<void> | undefined;

  const open = async (): Promise<string> => {
    opening ??= (async () => {
      if (state.cursor !== undefined) return;
      const { signal, since } = options;
      const page = await stageEventsPage(transport, {
        ...(pattern !== undefined ? { pattern } : {}),
        ...(since !== undefined ? { since } : {}),
        limit: 1,
        ...(signal ? { signal } : {}),
      });
      held = page.events;
      state.cursor = page.cursor;
    })();
    try {
      await opening;
    } catch (error) {
      // A failed opening (the service was down) may be tried again.
      opening = undefined;
      throw error;
    }
    return state.cursor as string;
  };

  async function* iterate(): AsyncGenerator<StageEvent> {
    if (options.signal?.aborted) return;
    try {
      await open();
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
    for (const event of held.splice(0)) yield { event, cursor: state.cursor as string };
    const query = { pattern, limit: options.limit };
    for await (const event of followEvents(transport, PATH, query, options, state)) {
      yield { event, cursor: state.cursor as string };
    }
  }

  return {
    get cursor() {
      return state.cursor;
    },
    open,
    [Symbol.asyncIterator]: iterate,
  };
}

function patternText(pattern: StageEventsQuery["pattern"]): string | undefined {
  return pattern === undefined || typeof pattern === "string" ? pattern : JSON.stringify(pattern);
}
