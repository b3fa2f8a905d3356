import type {
  AttachedCaller,
  LogLevel,
  RelayAnswer,
  RelayedMethod,
  RelayNotification,
} from "@toolbus/wire/model/relay";
import type { CallChannel, CallKey } from "../ports";
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
  /** The caller's answer to a server's request; `signal` is the tool's. */
  ask(
    method: RelayedMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<RelayAnswer>;
  /** Best effort; never fails the call. */
  tell(message: RelayNotification): void;
}

/** The link of a call where nothing relays: nobody to ask or tell. */
export const NO_CALLER: CallerLink = {
  describe: async () => undefined,
  ask: async (method) => refusal(`Nobody waits for this call who could answer ${method}.`),
  tell: () => undefined,
};

/** The link of one call through the stage's channel; `report` hears what went wrong. */
export function callerLink(
  channel: CallChannel | undefined,
  key: CallKey,
  report: (error: unknown) => void,
): CallerLink {
  if (!channel) return NO_CALLER;
  return {
    describe: () => channel.caller(key),
    ask: (method, params, signal) => channel.ask(key, { method, params }, signal),
    tell(message) {
      channel.notify(key, message).catch(report);
    },
  };
}

/** The caller as a tool sees it: its requests end with the tool's own `signal`. */
export function boundCaller(link: CallerLink, signal: AbortSignal): ToolCaller {
  return {
    describe: () => link.describe(),
    ask: (method, params) => link.ask(method, params, signal),
    tell: (message) => link.tell(message),
  };
}

/** A tool's view where nobody waits for its call (tests, tools run outside a call). */
export const NOBODY_WAITS: ToolCaller = boundCaller(NO_CALLER, new AbortController().signal);
