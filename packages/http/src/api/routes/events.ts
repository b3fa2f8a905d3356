import { setTimeout as sleep } from "node:timers/promises";
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { RateLimitedError, ToolbusError, ValidationError } from "@toolbus/core/errors";
import type { EventLogPage, KeyStore } from "@toolbus/core/ports";
import {
  runEventPageView,
  runEventsQuery,
  stageEventPageView,
  stageEventsQuery,
} from "@toolbus/wire/schemas";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { logFailure } from "../../common/errors";
import { bearerSecurity, errorResponses, runIdParam } from "../schemas";

const DEFAULT_FOLLOW_INTERVAL_MS = 250;
const DEFAULT_FOLLOW_MAX_MS = 15 * 60_000;
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const DEFAULT_PAGE = 100;
/** Event streams one key may hold open in one process; more answer 429. */
const DEFAULT_STREAMS_PER_KEY = 20;
/** How often an open stream asks whether its key is still valid (revocation closes it). */
const DEFAULT_KEY_CHECK_MS = 1_000;
const MAX_CURSOR_LENGTH = 2048;

export function registerEventRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { events, config } = deps;
  const timing = {
    intervalMs: deps.followIntervalMs ?? DEFAULT_FOLLOW_INTERVAL_MS,
    maxMs: deps.followMaxMs ?? DEFAULT_FOLLOW_MAX_MS,
    keepAliveMs: deps.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    buffered: deps.followBuffered ?? false,
    keyCheckMs: deps.keyCheckMs ?? DEFAULT_KEY_CHECK_MS,
  };
  const streamsPerKey = deps.maxStreamsPerKey ?? DEFAULT_STREAMS_PER_KEY;
  const openStreams = new Map<string, number>();

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/runs/{runId}/events",
      tags: ["Events"],
      summary: "A run's events, in order",
      description:
        "JSON pages after `cursor`. With `Accept: text/event-stream`, the events after the cursor (or `Last-Event-ID`) and then new ones as they arrive: `event:` is the detail type, `data:` the run event, `id:` the cursor to resume from. Idle streams get a `: keep-alive` comment; a stream ends after a maximum duration and the client reconnects with Last-Event-ID.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: { params: z.object({ runId: runIdParam }), query: runEventsQuery },
      responses: {
        200: {
          description: "A page of events, or an event stream",
          content: {
            "application/json": { schema: runEventPageView },
            "text/event-stream": { schema: z.string() },
          },
        },
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { runId } = c.req.valid("param");
      const query = c.req.valid("query");
      if (!wantsEventStream(c.req.header("accept"))) {
        const page = await events.read(runId, {
          ...(query.cursor ? { cursor: query.cursor } : {}),
          ...(query.limit ? { limit: query.limit } : {}),
        });
        return c.json({ events: page.events, cursor: page.cursor ?? null }, 200);
      }
      const cursor = resumeCursor(c.req.header("last-event-id"), query.cursor);
      const limit = query.limit ?? DEFAULT_PAGE;
      return serve(c, {
        cursor,
        limit,
        read: (after) => events.read(runId, { ...(after ? { cursor: after } : {}), limit }),
        ...(events.appended
          ? { appended: (signal: AbortSignal) => events.appended?.(runId, signal) ?? pending() }
          : {}),
      });
    },
  );

  const stageEvents = deps.stageEvents;
  if (!stageEvents) return;
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/events",
      tags: ["Events"],
      summary: "Every run's events, in the stage's order, filtered by an event pattern",
      description:
        "Each Toolbus event once recorded, in one order for all runs, filtered by `pattern` (an EventBridge pattern, as for subscriptions). Starts at the end, at `cursor`, or at `since`. Pages may be empty while `more` is true. `Accept: text/event-stream` follows it as a run's events.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: { query: stageEventsQuery },
      responses: {
        200: {
          description: "A page of events, or an event stream",
          content: {
            "application/json": { schema: stageEventPageView },
            "text/event-stream": { schema: z.string() },
          },
        },
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const query = c.req.valid("query");
      const stream = await stageEvents();
      const pattern = stream.pattern(query.pattern);
      const cursor = resumeCursor(c.req.header("last-event-id"), query.cursor);
      const limit = query.limit ?? DEFAULT_PAGE;
      let after = await stream.start({ cursor, since: query.since });
      const read = async (): Promise<EventLogPage & { more: boolean }> => {
        const page = await stream.page(after, { pattern, limit });
        after = Number(page.cursor);
        return page;
      };
      if (!wantsEventStream(c.req.header("accept"))) {
        const page = await read();
        return c.json({ events: page.events, cursor: page.cursor, more: page.more }, 200);
      }
      return serve(c, {
        cursor: String(after),
        limit,
        read,
        appended: (signal) => stream.appended(signal),
      });
    },
  );

  /**
   * Opens an event stream: the first read happens before it opens, so a bad cursor or an
   * outage is still an ordinary JSON error with its status; a key holds a bounded number open.
   */
  async function serve(c: Context<HttpEnv>, source: FollowSource) {
    const first = await source.read(source.cursor);
    const holder = c.get("principal").id;
    const open = openStreams.get(holder) ?? 0;
    if (open >= streamsPerKey) {
      throw new RateLimitedError(
        `This key already has ${open} event streams open here; close one, or page with ?cursor=.`,
        { details: { openStreams: open, limit: streamsPerKey } },
      );
    }
    openStreams.set(holder, open + 1);
    const release = () => {
      const left = (openStreams.get(holder) ?? 1) - 1;
      if (left > 0) openStreams.set(holder, left);
      else openStreams.delete(holder);
    };
    // Reverse proxies (nginx) would otherwise buffer the stream.
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (stream) => {
      try {
        await follow(c, stream, { ...source, keys: deps.keys, holder, first, ...timing });
      } finally {
        release();
      }
    });
  }
}

const pending = () => new Promise<void>(() => undefined);

function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

/** A reconnecting EventSource sends Last-Event-ID; it wins over the cursor in its old URL. */
function resumeCursor(lastEventId: string | undefined, cursor: string | undefined) {
  const resumed = lastEventId?.trim();
  if (!resumed) return cursor;
  if (resumed.length > MAX_CURSOR_LENGTH) {
    throw new ValidationError("Last-Event-ID is not a cursor.", {
      details: [{ path: "last-event-id", message: `At most ${MAX_CURSOR_LENGTH} characters.` }],
    });
  }
  return resumed;
}

/** Where a stream's events come from. */
interface FollowSource {
  /** Where the stream starts (the SSE id a client resumes from). */
  cursor: string | undefined;
  limit: number;
  /** The page after `cursor`; `more` says there is backlog past it even if the page is short. */
  read(cursor: string | undefined): Promise<EventLogPage & { more?: boolean }>;
  /** Resolves when this process appends an event the stream may hold. */
  appended?(signal: AbortSignal): Promise<void>;
}

interface FollowOptions extends FollowSource {
  keys: KeyStore;
  /** The key holding the stream. */
  holder: string;
  first: EventLogPage & { more?: boolean };
  intervalMs: number;
  maxMs: number;
  keepAliveMs: number;
  buffered: boolean;
  keyCheckMs: number;
}

/**
 * Sends the backlog, then polls the event log until the client goes away or the maximum
 * duration passes; every wait wakes up on disconnect, so a closed connection never keeps a
 * loop running. Pages are read whole; the SSE `id` (the log's cursor) goes on the last event
 * of each page. A client resuming from it may see the rest of a page again, which is fine:
 * delivery is at least once everywhere and events carry their eventKey.
 */
async function follow(c: Context<HttpEnv>, stream: SSEStreamingApi, options: FollowOptions) {
  const stop = new AbortController();
  stream.onAbort(() => stop.abort());
  c.req.raw.signal?.addEventListener("abort", () => stream.abort(), { once: true });
  const deadline = Date.now() + options.maxMs;
  const over = () => stop.signal.aborted || Date.now() >= deadline;

  let page = options.first;
  let cursor = options.cursor;
  let sent = 0;
  let lastWrite = Date.now();
  let keyCheckedAt = Date.now();
  const keyStillValid = c.get("keyStillValid");
  // A revocation in this process wakes the stream at once; others are found by asking.
  let revokedHere = false;
  let revocation = options.keys.revoked?.(options.holder, stop.signal).then(() => {
    revokedHere = true;
  });
  /** Whether the key was revoked: asked when due (it is a cached lookup) or when told. */
  const revoked = async () => {
    if (!revokedHere && Date.now() - keyCheckedAt < options.keyCheckMs) return false;
    if (revokedHere) {
      // Told once; a failed revocation leaves the key valid, and the stream on its checks.
      revokedHere = false;
      revocation = undefined;
    }
    keyCheckedAt = Date.now();
    return !(await keyStillValid());
  };
  try {
    for (;;) {
      for (const [index, event] of page.events.entries()) {
        const last = index === page.events.length - 1;
        await stream.writeSSE({
          event: event.detailType,
          data: JSON.stringify(event),
          ...(last && page.cursor ? { id: page.cursor } : {}),
          ...(options.buffered && sent === 0 ? { retry: options.intervalMs } : {}),
        });
        sent += 1;
        lastWrite = Date.now();
      }
      cursor = page.cursor ?? cursor;
      if (over()) return;
      // Buffered, nothing reaches the client before the end: end with what there is.
      if (options.buffered && sent > 0 && page.events.length < options.limit) return;
      // A full page means more backlog: read on at once. Otherwise we are live: wait for an
      // append or the poll interval, asking every second meanwhile whether the key still holds.
      if (page.events.length < options.limit && !page.more) {
        const pollAt = Date.now() + options.intervalMs;
        for (;;) {
          if (Date.now() - lastWrite >= options.keepAliveMs) {
            await stream.write(": keep-alive\n\n");
            lastWrite = Date.now();
          }
          const wakeAt = Math.min(
            pollAt,
            keyCheckedAt + options.keyCheckMs,
            lastWrite + options.keepAliveMs,
            deadline,
          );
          const appended = await nextAppend(options, wakeAt - Date.now(), stop.signal, revocation);
          if (over()) return;
          if (await revoked()) return endRevoked(stream);
          if (appended || Date.now() >= pollAt) break;
        }
      } else if (await revoked()) {
        return endRevoked(stream);
      }
      page = await options.read(cursor);
    }
  } catch (error) {
    if (stop.signal.aborted) return;
    logFailure(c, error);
    // Headers are gone; the error travels as an event in the same shape as JSON errors.
    const code = error instanceof ToolbusError && error.status === 503 ? error.code : "internal";
    await stream.writeSSE({
      event: "error",
      data: JSON.stringify({
        error: { code, message: "The event stream stopped; reconnect with Last-Event-ID." },
      }),
    });
  }
}

async function endRevoked(stream: SSEStreamingApi): Promise<void> {
  await stream.writeSSE({
    event: "error",
    data: JSON.stringify({
      error: { code: "unauthorized", message: "The API key is not valid any more." },
    }),
  });
}

/**
 * Waits up to `ms`, or less when this process appends to what is followed (then true): under `npm start`
 * the recorder runs here, so a follower wakes as an event lands and idle streams cost little;
 * on AWS the recorder is another function and the poll interval is what bounds the delay.
 */
async function nextAppend(
  options: FollowOptions,
  ms: number,
  signal: AbortSignal,
  revocation: Promise<void> | undefined,
): Promise<boolean> {
  const waiting = new AbortController();
  const stopWaiting = () => waiting.abort();
  signal.addEventListener("abort", stopWaiting, { once: true });
  try {
    return await Promise.race([
      pause(ms, waiting.signal).then(() => false),
      ...(options.appended
        ? [options.appended(waiting.signal).then(() => !waiting.signal.aborted)]
        : []),
      ...(revocation ? [revocation.then(() => false)] : []),
    ]);
  } finally {
    waiting.abort();
    signal.removeEventListener("abort", stopWaiting);
  }
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}
