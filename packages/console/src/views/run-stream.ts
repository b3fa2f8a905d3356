/**
 * Following an event stream of the API (a run's, or the stage's) while a page is open: fetch
 * streaming with the bearer header, and when the server ends a stream (it does after a while)
 * or it breaks, opening it again from the last event id, so nothing is missed. Stops when the
 * page's signal aborts, or for good on an answer that will not change (400, 403, 404; a 401
 * has already ended the session).
 */
import { type Api, ApiError, type RequestOptions } from "../api";
import { duration, errorText, pause } from "../widgets";
import type { RunEvent } from "./run-model";

/** Waits before reconnecting after a failure, growing up to the last. */
const RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];
/** A stream that ended sooner than this is reopened only after a short pause. */
const QUICK_END_MS = 2_000;
/**
 * Streams that end this quickly this many times in a row are answers buffered on the way (on
 * AWS each answer ends after one read): the page then says it updates every few seconds.
 */
const BUFFERED_AFTER = 2;

export type StreamState = "live" | "waiting" | "stopped";

export interface FollowOptions {
  signal: AbortSignal;
  /** The cursor the page's first read ended at: the stream starts after it. */
  from: string | undefined;
  query?: RequestOptions["query"];
  /** What appears as it happens, e.g. "new events" (the default). */
  news?: string;
  onEvent(event: RunEvent): void;
  onState(state: StreamState, text: string): void;
}

export async function followEvents(api: Api, path: string, options: FollowOptions) {
  const { signal } = options;
  let lastId = options.from;
  let failures = 0;
  let quickEnds = 0;
  const news = options.news ?? "new events";
  const live = () =>
    options.onState(
      "live",
      quickEnds >= BUFFERED_AFTER
        ? `Updated every few seconds: ${news} appear shortly after they happen.`
        : `Live: ${news} appear as they happen.`,
    );
  const retryIn = () => RETRY_MS[Math.min(failures, RETRY_MS.length) - 1] ?? 30_000;
  while (!signal.aborted) {
    const opened = Date.now();
    let streamError: string | undefined;
    try {
      lastId = await api.stream(
        path,
        (event) => {
          if (event.event === "error") {
            streamError = errorMessage(event.data);
            return;
          }
          let parsed: RunEvent;
          try {
            parsed = JSON.parse(event.data) as RunEvent;
          } catch {
            return;
          }
          if (parsed && typeof parsed.eventKey === "string" && parsed.detail) {
            options.onEvent(parsed);
          }
        },
        {
          signal,
          onOpen: live,
          ...(lastId ? { lastEventId: lastId } : {}),
          ...(options.query ? { query: options.query } : {}),
        },
      );
      if (signal.aborted) return;
      if (streamError) {
        failures += 1;
        quickEnds = 0;
        options.onState("waiting", `The stream stopped (${streamError}); reconnecting…`);
        await pause(retryIn(), signal);
      } else {
        failures = 0;
        // The server ends streams after a while: reopen at once, unless it ended at once.
        if (Date.now() - opened < QUICK_END_MS) {
          quickEnds += 1;
          if (quickEnds === BUFFERED_AFTER) live();
          await pause(QUICK_END_MS, signal);
        } else {
          quickEnds = 0;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && [400, 401, 403, 404].includes(error.status)) {
        options.onState("stopped", `Not following live: ${error.message}`);
        return;
      }
      failures += 1;
      quickEnds = 0;
      const wait = retryIn();
      options.onState(
        "waiting",
        `Lost the events (${errorText(error)}); trying again in ${duration(wait)}…`,
      );
      await pause(wait, signal);
    }
  }
}

function errorMessage(data: string): string {
  try {
    const parsed = JSON.parse(data) as { error?: { message?: string } };
    return parsed.error?.message ?? "an error";
  } catch {
    return "an error";
  }
}
