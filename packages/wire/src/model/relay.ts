import * as z from "zod";

/*
 * What passes between a running call and the live MCP caller waiting for it: the tool's
 * progress and log messages on the way out, and the requests a registered MCP server makes of
 * its client (elicitation, sampling, roots) with their answers. Locally it stays in memory;
 * on AWS it is stored beside the call (see `CallChannel` in core's ports), so every shape is
 * parsed when read back.
 */

/** The MCP generations a caller may speak: 2025-11-25 and before, or 2026-07-28. */
export const callerEra = z.enum(["legacy", "modern"]);
export type CallerEra = z.infer<typeof callerEra>;

/** The requests of a server to its client that Toolbus passes on to the caller. */
export const RELAYED_METHODS = [
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
] as const;
export const relayedMethod = z.enum(RELAYED_METHODS);
export type RelayedMethod = z.infer<typeof relayedMethod>;

/** The client capability that lets a server make each relayed request. */
export const CAPABILITY_OF: Readonly<Record<RelayedMethod, "elicitation" | "sampling" | "roots">> =
  {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
  };

/** MCP's log levels, least severe first. */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;
export const logLevel = z.enum(LOG_LEVELS);
export type LogLevel = z.infer<typeof logLevel>;

/** Whether a message at `level` reaches a caller that asked for `threshold` and above. */
export function atOrAbove(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/** Client capabilities as a caller declared them: only the parts a server may ask about. */
export const relayCapabilities = z
  .object({
    elicitation: z.record(z.string(), z.unknown()).optional(),
    sampling: z.record(z.string(), z.unknown()).optional(),
    roots: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type RelayCapabilities = z.infer<typeof relayCapabilities>;

/** The live caller of a call, as it attached to it. */
export const attachedCaller = z
  .object({
    /** Only this principal's answers count. */
    principalId: z.string().min(1),
    era: callerEra,
    /**
     * What the caller can be asked: declared per request on 2026-07-28; on 2025-11-25 (whose
     * stateless requests carry no capabilities) every relayed method, when it reads an event
     * stream; none otherwise.
     */
    capabilities: relayCapabilities,
    /** The least severe log level it wants; absent, it gets no log messages. */
    logLevel: logLevel.optional(),
    /** Whether it wants progress (it sent a progress token). */
    progress: z.boolean(),
  })
  .strict();
export type AttachedCaller = z.infer<typeof attachedCaller>;

/** Whether the caller took the capability a method needs. */
export function accepts(caller: AttachedCaller | undefined, method: RelayedMethod): boolean {
  return caller?.capabilities[CAPABILITY_OF[method]] !== undefined;
}

/** Whether the caller asked for this kind of message (a progress token; a log level). */
export function wants(caller: AttachedCaller | undefined, message: RelayNotification): boolean {
  if (!caller) return false;
  if (message.kind === "progress") return caller.progress;
  return caller.logLevel !== undefined && atOrAbove(message.level, caller.logLevel);
}

/** One message from the running call to its caller. */
export const relayNotification = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("progress"),
      progress: z.number(),
      total: z.number().optional(),
      message: z.string().optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal("log"),
      level: logLevel,
      logger: z.string().optional(),
      data: z.unknown(),
    })
    .strict(),
]);
export type RelayNotification = z.infer<typeof relayNotification>;

/** A request the server made of its client, passed on to the caller under Toolbus's own id. */
export const relayRequest = z
  .object({
    /** Unique, unguessable: the caller's answer names it. */
    id: z.string().min(1).max(200),
    /**
     * The server's own name for the request (a 2026-07-28 server's `inputRequests` key), which
     * a caller is shown where it can be.
     */
    key: z.string().min(1).max(200).optional(),
    method: relayedMethod,
    params: z.record(z.string(), z.unknown()),
  })
  .strict();
export type RelayRequest = z.infer<typeof relayRequest>;

/** The caller's answer, as JSON-RPC carries one: a result or an error. */
export const relayAnswer = z.union([
  z.object({ result: z.record(z.string(), z.unknown()) }).strict(),
  z
    .object({
      error: z
        .object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() })
        .strict(),
    })
    .strict(),
]);
export type RelayAnswer = z.infer<typeof relayAnswer>;

/** What reaches an attached caller, in order. */
export type RelayEvent =
  | { type: "notification"; notification: RelayNotification }
  | { type: "request"; request: RelayRequest };

/** JSON-RPC's "method not found", which a client without the capability answers too. */
export const NO_SUCH_METHOD = -32601;
