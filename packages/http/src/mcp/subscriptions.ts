import { setTimeout as sleep } from "node:timers/promises";
import { hasPermission } from "@toolbus/core/app/access";
import type { McpFederation } from "@toolbus/core/app/federation/service";
import type { StageConfig } from "@toolbus/core/config";
import { RateLimitedError } from "@toolbus/core/errors";
import type { KeyStore, McpSubscription, McpSubscriptions } from "@toolbus/core/ports";
import { canonicalJson, sha256Hex } from "@toolbus/core/util/canonical-json";
import type { Principal } from "@toolbus/wire/model/call";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { HttpEnv } from "../common/env";
import { logFailure } from "../common/errors";

/** Longest URI a caller may subscribe to (a template never matches a longer one either). */
export const MAX_SUBSCRIBED_URI = 2_048;
/** Most resources one stream reads per tick; a caller's others are read on the next ticks. */
export const MAX_READS_PER_TICK = 20;
/** Reads one stream has in flight at once. */
const READ_CONCURRENCY = 5;

const DEFAULT_POLL_MS = 5_000;
const DEFAULT_MAX_MS = 15 * 60_000;
const DEFAULT_KEEP_ALIVE_MS = 15_000;
const DEFAULT_KEY_CHECK_MS = 1_000;
const DEFAULT_STREAMS_PER_KEY = 20;

/**
 * What a changed resource looks like: the hash of its contents as the server read them (its
 * `contents` array, keys sorted). Undefined for an answer without contents.
 */
export function contentsHash(result: Record<string, unknown>): string | undefined {
  return Array.isArray(result.contents) ? sha256Hex(canonicalJson(result.contents)) : undefined;
}

/** What the `GET /mcp` stream needs: the stage's pieces and its timing (all bounded). */
export interface ResourceStreamDeps {
  config: StageConfig;
  keys: KeyStore;
  federation: McpFederation;
  subscriptions: McpSubscriptions;
  /** How often the subscribed resources are read, ms (default 5 s). */
  pollMs?: number | undefined;
  /** Longest a stream stays open, ms (default 15 min); the client then reconnects. */
  maxMs?: number | undefined;
  keepAliveMs?: number | undefined;
  keyCheckMs?: number | undefined;
  /** Streams one key may hold open in this process (default 20); more answer 429. */
  maxStreamsPerKey?: number | undefined;
}

/** Who the stream is for: the key's principal, in the request's (resolved) mode. */
export interface StreamCaller {
  principal: Principal;
  mode: string;
}

/**
 * The standalone SSE stream of `GET /mcp` (2025-11-25 and the generations before it that
 * speak Streamable HTTP): while it is open, the caller's subscribed resources are read through
 * the federation every `pollMs`, as the caller and in its mode, and a
 * `notifications/resources/updated` is sent for each whose contents changed. Subscriptions
 * live in the stage's store, so the POST that subscribes and this stream may be answered by
 * different instances. What a stream compares with is the hash stored with the subscription
 * (taken when it was made, and whenever a stream sees a change), so a change between the
 * subscription and the stream's first read, or while the client reconnected, is told too.
 */
export class ResourceStreams {
  readonly #deps: ResourceStreamDeps;
  readonly #open = new Map<string, number>();

  constructor(deps: ResourceStreamDeps) {
    this.#deps = deps;
  }

  serve(c: Context<HttpEnv>, caller: StreamCaller): Response {
    const holder = caller.principal.id;
    const limit = this.#deps.maxStreamsPerKey ?? DEFAULT_STREAMS_PER_KEY;
    const open = this.#open.get(holder) ?? 0;
    if (open >= limit) {
      throw new RateLimitedError(
        `This key already has ${open} MCP streams open here; close one first.`,
        { details: { openStreams: open, limit } },
      );
    }
    this.#open.set(holder, open + 1);
    const release = () => {
      const left = (this.#open.get(holder) ?? 1) - 1;
      if (left > 0) this.#open.set(holder, left);
      else this.#open.delete(holder);
    };
    // Reverse proxies (nginx) would otherwise buffer the stream.
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (stream) => {
      try {
        await this.#follow(c, stream, caller);
      } catch (error) {
        // Headers are gone: the stream ends, and the client reconnects.
        logFailure(c, error);
      } finally {
        release();
      }
    });
  }

  async #follow(c: Context<HttpEnv>, stream: SSEStreamingApi, caller: StreamCaller) {
    const deps = this.#deps;
    const pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
    const keepAliveMs = deps.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    const keyCheckMs = deps.keyCheckMs ?? DEFAULT_KEY_CHECK_MS;
    const stop = new AbortController();
    stream.onAbort(() => stop.abort());
    c.req.raw.signal?.addEventListener("abort", () => stream.abort(), { once: true });
    const deadline = Date.now() + (deps.maxMs ?? DEFAULT_MAX_MS);
    const over = () => stop.signal.aborted || Date.now() >= deadline;

    const holder = caller.principal.id;
    const state: TickState = { seen: new Map(), offset: 0 };
    let lastWrite = Date.now();
    let keyCheckedAt = Date.now();
    const keyStillValid = c.get("keyStillValid");
    // As the event streams do: a revocation in this process wakes the stream at once; others
    // are found by asking every keyCheckMs (a cached lookup).
    let revokedHere = false;
    let revocation = deps.keys.revoked?.(holder, stop.signal).then(() => {
      revokedHere = true;
    });
    const revoked = async () => {
      if (!revokedHere && Date.now() - keyCheckedAt < keyCheckMs) return false;
      if (revokedHere) {
        revokedHere = false;
        revocation = undefined;
      }
      keyCheckedAt = Date.now();
      return !(await keyStillValid());
    };
    const write = async (message: unknown) => {
      await stream.writeSSE({ event: "message", data: JSON.stringify(message) });
      lastWrite = Date.now();
    };

    for (;;) {
      if (over()) return;
      if (await revoked()) return;
      await this.#tick(caller, state, write);
      if (over()) return;
      const nextTick = Date.now() + pollMs;
      for (;;) {
        if (Date.now() - lastWrite >= keepAliveMs) {
          await stream.write(": keep-alive\n\n");
          lastWrite = Date.now();
        }
        const wakeAt = Math.min(
          nextTick,
          keyCheckedAt + keyCheckMs,
          lastWrite + keepAliveMs,
          deadline,
        );
        await pause(wakeAt - Date.now(), stop.signal, revocation);
        if (over()) return;
        if (await revoked()) return;
        if (Date.now() >= nextTick) break;
      }
    }
  }

  /**
   * One round: the caller's subscriptions, at most MAX_READS_PER_TICK of them read (in turn),
   * an update sent for each changed one. A resource the caller may no longer read (its access
   * or its server gone, or the server says it has no such resource) is unsubscribed; one whose
   * server does not answer now is read again next time.
   */
  async #tick(
    caller: StreamCaller,
    state: TickState,
    write: (message: unknown) => Promise<void>,
  ): Promise<void> {
    const { config, federation, subscriptions } = this.#deps;
    const { principal, mode } = caller;
    // Reading a resource asks its server with the toolset's credential: `call`, as the reads.
    if (!hasPermission(config, principal, "call")) return;
    const subscribed = (await subscriptions.list(principal.id)).sort((a, b) =>
      a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0,
    );
    const current = new Set(subscribed.map((subscription) => subscription.uri));
    for (const uri of state.seen.keys()) if (!current.has(uri)) state.seen.delete(uri);
    if (subscribed.length === 0) return;
    const count = Math.min(MAX_READS_PER_TICK, subscribed.length);
    const start = state.offset % subscribed.length;
    const batch = Array.from({ length: count }, (_, index) => {
      return subscribed[(start + index) % subscribed.length] as McpSubscription;
    });
    state.offset = start + count;
    const changed = new Set<string>();
    await inParallel(batch, READ_CONCURRENCY, async ({ uri, hash: stored }) => {
      let result: Record<string, unknown> | undefined;
      try {
        result = await federation.readResource(principal, mode, uri);
      } catch {
        return;
      }
      if (!result) {
        state.seen.delete(uri);
        await subscriptions.unsubscribe(principal.id, uri);
        return;
      }
      const hash = contentsHash(result);
      if (hash === undefined) return;
      const before = state.seen.get(uri) ?? stored;
      state.seen.set(uri, hash);
      if (hash !== stored) await subscriptions.seen(principal.id, uri, hash);
      if (before !== undefined && before !== hash) changed.add(uri);
    });
    for (const uri of [...changed].sort()) {
      await write({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
    }
  }
}

interface TickState {
  /** Each subscribed URI's contents hash as this stream last read it. */
  seen: Map<string, string>;
  /** Where the next tick's reads start in the caller's (sorted) subscriptions. */
  offset: number;
}

/** Runs `work` on every item, at most `limit` at a time. */
async function inParallel<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Waits up to `ms`, less when the stream closes or its key is revoked in this process. */
async function pause(
  ms: number,
  signal: AbortSignal,
  revocation: Promise<void> | undefined,
): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  const waiting = new AbortController();
  const stopWaiting = () => waiting.abort();
  signal.addEventListener("abort", stopWaiting, { once: true });
  try {
    await Promise.race([
      sleep(ms, undefined, { signal: waiting.signal }).catch(() => undefined),
      ...(revocation ? [revocation] : []),
    ]);
  } finally {
    waiting.abort();
    signal.removeEventListener("abort", stopWaiting);
  }
}
