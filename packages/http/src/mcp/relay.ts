import type { CallChannel, CallKey } from "@toolbus/core/ports";
import type {
  AttachedCaller,
  RelayEvent,
  RelayNotification,
  RelayRequest,
} from "@toolbus/wire/model/relay";

/*
 * The caller's half of the relay between a running call and the MCP caller waiting for it
 * (core's CallChannel): while the call runs, its progress and log messages go out on the
 * caller's response stream, and a registered server's requests go to the caller — on
 * 2025-11-25 as requests on that stream (answered by a later POST, see `relayAnswerOf`), on
 * 2026-07-28 as an `input_required` result (answered by the retried call).
 */

/** A JSON-RPC notification for the caller. */
export interface OutgoingNotification {
  method: "notifications/progress" | "notifications/message";
  params: Record<string, unknown>;
}

/** How the relay reaches this caller. */
export interface CallerStream {
  /** Sends a notification on the caller's response stream. */
  notify(notification: OutgoingNotification): Promise<void>;
  /**
   * Sends a server's request on the stream (2025-11-25). Absent on 2026-07-28: requests end
   * the answer as `input_required` instead.
   */
  request?(request: RelayRequest): Promise<void>;
}

/** What the caller is answered: the call's outcome, or requests it must answer first. */
export type Relayed<T> = { done: T } | { asked: RelayRequest[] };

/**
 * How long requests keep gathering after the first, so a server's requests made together
 * (2026-07-28 asks for them all at once) reach the caller in one round.
 */
const GATHER_MS = 40;

/**
 * Runs `run` (the call, waited for) with the caller attached to it: what the call sends the
 * caller is passed on as it comes. With a `request` on the stream the answer is always the
 * call's; without, the first requests end it early (the call keeps running and waits for
 * them), and the caller stays attached to come back with its answers.
 */
export async function relayWhile<T>(
  channel: CallChannel,
  key: CallKey,
  caller: AttachedCaller,
  stream: CallerStream,
  run: () => Promise<T>,
  progressToken: string | number | undefined,
  /** Fires when the caller hangs up: what was asked of it is refused from then on. */
  hungUp?: AbortSignal,
  /**
   * Whether the caller stays attached after this answer (a 2026-07-28 task's caller: the call
   * goes on, and what it asks waits for the caller's `tasks/get`). Otherwise an answered caller
   * is gone, and what the call asks from then on is refused.
   */
  stays?: (done: T) => boolean,
): Promise<Relayed<T>> {
  const attachment = await channel.attach(key, caller);
  const stop = new AbortController();
  const leave = () => {
    stop.abort();
    void attachment.close({ gone: true }).catch(() => undefined);
  };
  hungUp?.addEventListener("abort", leave, { once: true });
  const asked: RelayRequest[] = [];
  let gathered: (() => void) | undefined;
  const roundReady = new Promise<void>((resolve) => {
    gathered = resolve;
  });
  const pass = async (event: RelayEvent) => {
    if (event.type === "notification") {
      const notification = toNotification(event.notification, progressToken);
      if (notification) await stream.notify(notification);
    } else if (stream.request) {
      await stream.request(event.request);
    } else {
      if (asked.length === 0) setTimeout(() => gathered?.(), GATHER_MS);
      asked.push(event.request);
    }
  };
  const pump = (async () => {
    for await (const event of attachment.events(stop.signal)) {
      // A caller that went away loses its messages; the call carries on regardless.
      await pass(event).catch(() => undefined);
    }
  })();
  let gone = true;
  try {
    const running = run().then((done) => ({ done }));
    const outcome = stream.request
      ? await running
      : await Promise.race([running, roundReady.then(() => ({ asked: [...asked] }))]);
    if ("asked" in outcome) {
      // The call goes on; its caller will be back with the answers.
      running.catch(() => undefined);
      gone = false;
    } else if (stays?.(outcome.done)) {
      gone = false;
    }
    return outcome;
  } finally {
    hungUp?.removeEventListener("abort", leave);
    stop.abort();
    await pump;
    await attachment.close({ gone });
  }
}

/** A relayed message as MCP sends it; progress only to a caller that gave a token. */
function toNotification(
  message: RelayNotification,
  progressToken: string | number | undefined,
): OutgoingNotification | undefined {
  if (message.kind === "log") {
    return {
      method: "notifications/message",
      params: {
        level: message.level,
        ...(message.logger === undefined ? {} : { logger: message.logger }),
        data: message.data,
      },
    };
  }
  if (progressToken === undefined) return undefined;
  return {
    method: "notifications/progress",
    params: {
      progressToken,
      progress: message.progress,
      ...(message.total === undefined ? {} : { total: message.total }),
      ...(message.message === undefined ? {} : { message: message.message }),
    },
  };
}

/** Where a relayed request's JSON-RPC id starts: the answer is the relay's, not a server's. */
const RELAY_ID_PREFIX = "toolbus.relay.";

/** The JSON-RPC id a relayed request goes out with: it names the call, so any instance can take the answer. */
export function relayId(key: CallKey, requestId: string): string {
  const named = JSON.stringify([key.parentRunId, key.callId, requestId]);
  return `${RELAY_ID_PREFIX}${Buffer.from(named).toString("base64url")}`;
}

/** The call and request a relayed id names, or undefined for any other id. */
export function relayTarget(id: unknown): { key: CallKey; requestId: string } | undefined {
  if (typeof id !== "string" || !id.startsWith(RELAY_ID_PREFIX) || id.length > 2_000) {
    return undefined;
  }
  try {
    const named: unknown = JSON.parse(
      Buffer.from(id.slice(RELAY_ID_PREFIX.length), "base64url").toString("utf8"),
    );
    if (
      !Array.isArray(named) ||
      named.length !== 3 ||
      !named.every((part) => typeof part === "string" && part.length > 0)
    ) {
      return undefined;
    }
    const [parentRunId, callId, requestId] = named as [string, string, string];
    return { key: { parentRunId, callId }, requestId };
  } catch {
    return undefined;
  }
}
