import { runEventPageView, typedRunEvent } from "@toolbus/wire/schemas";
import * as z from "zod";
import { type FollowOptions, type FollowState, followEvents } from "./follow.js";
import { readJson, type Transport } from "./http.js";
import type { RunEvent } from "./schemas.js";

/** The API's page of a run's events, each event's detail checked by its detail type. */
const typedPage = runEventPageView.extend({ events: z.array(typedRunEvent) });

export interface EventsOptions extends FollowOptions {
  /** Start after this cursor (from a page, an SSE id, or a stream's `cursor`). */
  cursor?: string;
  /** Page size the server reads with (1-1000; its default is 100). */
  limit?: number;
  /**
   * Keep going: after the backlog, receive new events as they are logged, over
   * `text/event-stream`, reconnecting (with Last-Event-ID) whenever the server ends the
   * stream. Stops when the loop is left or `signal` fires.
   */
  follow?: boolean;
}

/** A run's events as an async iterable; `cursor` is where to resume from at any time. */
export interface RunEventStream extends AsyncIterable<RunEvent> {
  /**
   * Where to resume from: the cursor of the last page given out whole, or the last `id:` when
   * following. Resuming from it may repeat a few events already seen (delivery is at least
   * once; events carry `eventKey`).
   */
  readonly cursor: string | undefined;
}

export function runEvents(transport: Transport, runId: string, options: EventsOptions) {
  const path = `/v1/runs/${encodeURIComponent(runId)}/events`;
  const state: FollowState = { cursor: options.cursor };
  const stream: RunEventStream = {
    get cursor() {
      return state.cursor;
    },
    [Symbol.asyncIterator]: () =>
      options.follow
        ? followEvents(transport, path, { limit: options.limit }, options, state)
        : pageEvents(transport, path, options, state),
  };
  return stream;
}

async function* pageEvents(
  transport: Transport,
  path: string,
  options: EventsOptions,
  state: FollowState,
): AsyncGenerator<RunEvent> {
  const { signal } = options;
  for (;;) {
    if (signal?.aborted) return;
    let page: z.output<typeof typedPage>;
    try {
      const response = await transport.send("GET", path, {
        query: { cursor: state.cursor, limit: options.limit },
        ...(signal ? { signal } : {}),
      });
      page = await readJson(response, typedPage);
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
    for (const [index, event] of page.events.entries()) {
      if (index === page.events.length - 1) state.cursor = page.cursor ?? state.cursor;
      yield event;
    }
    // The log answers an empty page at its end; a short page is the end too when we know
    // the size asked for.
    if (page.events.length === 0) return;
    if (options.limit !== undefined && page.events.length < options.limit) return;
  }
}
