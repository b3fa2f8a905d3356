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
}

/** The link of a call where nothing relays: nobody to ask or tell. */
export const NO_CALLER: CallerLink = {
  describe: async () => undefined,
  ask: async (method) => refusal(`Nobody waits for this call who could answer ${method}.`),
  tell: () => undefined,
  settled: async () => undefined,
};

/** The link of one call through the stage's channel; `report` hears what went wrong. */
export function callerLink(
  channel: CallNotices | undefined,
  key: CallKey,
  report: (error: unknown) => void,
): CallerLink {
  if (!channel) return NO_CALLER;
  // Messages go out in the background; the call's result waits for them, so none follows it.
  const telling = new Set<Promise<void>>();
  return {
    describe: () => channel.caller(key),
    ask: (method, params, signal, name) =>
      channel.ask(key, { method, params, ...(name === undefined ? {} : { key: name }) }, signal),
    tell(message) {
      const told = channel.notify(key, message).catch(report);
      telling.add(told);
      void told.finally(() => telling.delete(told));
    },
    async settled() {
      while (telling.size > 0) await Promise.all([...telling]);
    },
  };
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
