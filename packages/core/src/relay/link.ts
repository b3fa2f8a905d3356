import { MAX_PROGRESS_MESSAGE } from "@toolbus/wire/model/call";
import type {
  AttachedCaller,
  RelayAnswer,
  RelayedMethod,
  RelayNotification,
} from "@toolbus/wire/model/relay";
import type { CallKey, CallNotices } from "../ports";
import type { ToolCaller } from "../tool-definition";
import { refusal } from "./refusal";

/**
 * What a running tool can do with the live MCP caller waiting for its call, if there is one:
 * ask it what a registered server asks of its client, and tell it the server's log messages.
 * Without a caller (REST, the bus, no relay on this stage) requests are refused and messages
 * dropped, at once.
 */
export interface CallerLink {
  /** The caller as it attached (its generation and capabilities), or undefined. */
  describe(): Promise<AttachedCaller | undefined>;
  /**
   * The caller's answer to a server's request; `signal` is the tool's, `key` the server's own
   * name for the request, if it has one.
   */
  ask(
    method: RelayedMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    key?: string,
  ): Promise<RelayAnswer>;
  /** Best effort; never fails the call. */
  tell(message: RelayNotification): void;
  /** Resolves once every message told so far is with the channel (or lost). */
  settled(): Promise<void>;
  /**
   * Whether the caller answered anything: the result then holds what that person said or
   * has, and is theirs alone (never cached for other callers).
   */
  answered(): boolean;
}

/** The link of a call where nothing relays: nobody to ask or tell. */
export const NO_CALLER: CallerLink = {
  describe: async () => undefined,
  ask: async (method) => refusal(`Nobody waits for this call who could answer ${method}.`),
  tell: () => undefined,
  settled: async () => undefined,
  answered: () => false,
};

/**
 * Messages one call may have on their way to its caller; past that a message is dropped (they
 * are best effort, and a server that floods must not flood the stage's table).
 */
export const MAX_MESSAGES_ON_THE_WAY = 64;
/** Largest request (its params, as JSON) or log message relayed: well within a table item. */
export const MAX_RELAYED_BYTES = 256 * 1024;
/** Longest server's name for a request kept (the wire's bound); a longer one is not shown. */
const MAX_KEY_LENGTH = 200;

/** The link of one call through the stage's channel; `report` hears what went wrong. */
export function callerLink(
  channel: CallNotices | undefined,
  key: CallKey,
  report: (error: unknown) => void,
): CallerLink {
  if (!channel) return NO_CALLER;
  // Messages go out one after another, in order (the table keeps them sorted by when they
  // were sent), in the background; the call's result waits for them, so none follows it.
  let sending: Promise<void> = Promise.resolve();
  let onTheWay = 0;
  let answered = false;
  return {
    describe: () => channel.caller(key),
    async ask(method, params, signal, name) {
      const bytes = jsonBytes(params);
      if (bytes > MAX_RELAYED_BYTES) {
        return refusal(
          `The ${method} request (${bytes} bytes) is over the ${MAX_RELAYED_BYTES} bytes Toolbus passes on to a caller.`,
        );
      }
      const named = name !== undefined && name.length <= MAX_KEY_LENGTH ? { key: name } : {};
      const answer = await channel.ask(key, { method, params, ...named }, signal);
      if ("result" in answer) answered = true;
      return answer;
    },
    tell(message) {
      if (onTheWay >= MAX_MESSAGES_ON_THE_WAY) return;
      const bounded = boundedMessage(message);
      onTheWay++;
      sending = sending
        .then(() => channel.notify(key, bounded))
        .catch(report)
        .finally(() => {
          onTheWay--;
        });
    },
    settled: () => sending,
    answered: () => answered,
  };
}

/** A message small enough to relay: a log message's data over the bound says what it was. */
function boundedMessage(message: RelayNotification): RelayNotification {
  if (message.kind === "progress") {
    const note = message.message;
    return note !== undefined && note.length > MAX_PROGRESS_MESSAGE
      ? { ...message, message: note.slice(0, MAX_PROGRESS_MESSAGE) }
      : message;
  }
  const bytes = jsonBytes(message.data);
  if (bytes <= MAX_RELAYED_BYTES) return message;
  return { ...message, data: `(a log message of ${bytes} bytes, over what is relayed)` };
}

function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "");
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The caller as a tool sees it: its requests end with the tool's own `signal`. */
export function boundCaller(link: CallerLink, signal: AbortSignal): ToolCaller {
  return {
    describe: () => link.describe(),
    ask: (method, params, key) => link.ask(method, params, signal, key),
    tell: (message) => link.tell(message),
  };
}

/** A tool's view where nobody waits for its call (tests, tools run outside a call). */
export const NOBODY_WAITS: ToolCaller = boundCaller(NO_CALLER, new AbortController().signal);
