import {
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  inputRequired,
  type Server,
  type ServerContext,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/server";
import { sha256Hex } from "@toolbus/core/util/canonical-json";
import type { CallRecord, Failure } from "@toolbus/wire/model/call";
import type { RelayCapabilities } from "@toolbus/wire/model/relay";
import { declared } from "./relayed-call";

/*
 * A call that failed with `connection_required` (the tool acts as the caller on a provider the
 * caller has not connected) is answered, where the caller can take it, by sending its person to
 * the connect link with a URL-mode elicitation: on 2025-11-25 the -32042 error
 * (URLElicitationRequiredError), on 2026-07-28 an `input_required` result. The retried request
 * runs the tool again as a new call; the person has connected by then. Everywhere else the
 * failed result stands (results.ts), its text saying where to connect.
 */

/** What a caller can be sent to a URL with, from its request. */
export interface ConnectionCaller {
  era: "legacy" | "modern";
  /**
   * It declared URL-mode elicitation (`elicitation.url`): on 2026-07-28 in this request's
   * envelope; on 2025-11-25 in its `initialize`, known to a server that saw it or, on the
   * stateless `/mcp` (where each request has a new server), from the session id the
   * `initialize` was answered with (session-id.ts).
   */
  urlElicitation: boolean;
  /** A retried 2026-07-28 round's answers: one to the connection asked before is not asked again. */
  inputResponses?: Record<string, unknown>;
}

/** The caller a `tools/call` comes from, for `connectionRequiredAnswer`. */
export function connectionCaller(
  server: Server,
  ctx: ServerContext,
  era: "legacy" | "modern",
  /** What a 2025-era caller's session id says it declared in its `initialize`. */
  sessionDeclared?: RelayCapabilities,
): ConnectionCaller {
  if (era === "legacy") {
    // The initialize-scoped value the SDK keeps for a 2025-era connection, as its own gates
    // read, where this server saw the initialize; else what the session id carries.
    const capabilities = server.getClientCapabilities() ?? sessionDeclared;
    return { era, urlElicitation: isObject(capabilities?.elicitation?.url) };
  }
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const url = declared(envelope[CLIENT_CAPABILITIES_META_KEY]).elicitation?.url;
  const responses = ctx.mcpReq.inputResponses;
  return {
    era,
    urlElicitation: isObject(url),
    ...(responses ? { inputResponses: responses } : {}),
  };
}

/** The key of the connection request in an `input_required` result's `inputRequests`. */
export function connectKey(provider: string): string {
  return `toolbus/connect/${provider}`;
}

/** The URL-mode elicitation id of a call's connection request: the same for the same call. */
export function connectElicitationId(call: Pick<CallRecord, "parentRunId" | "callId">): string {
  return `connect-${sha256Hex(`${call.parentRunId}\n${call.callId}`).slice(0, 32)}`;
}

/**
 * How a finished call is answered when it failed for want of a connection and the caller can
 * be sent to connect: the -32042 error to throw (2025-11-25) or the `input_required` result to
 * return (2026-07-28). Undefined where the failed result answers instead: another outcome, no
 * connect link, a caller that did not declare URL elicitation, a call the caller named (the
 * same request again reaches the same failed call, so it cannot succeed), or a 2026-07-28
 * retry that already answered this connection request (asked once, never in a loop).
 */
export function connectionRequiredAnswer(
  call: CallRecord,
  caller: ConnectionCaller & {
    /** The same request again runs a new call: the caller did not name this one. */
    againRunsNew: boolean;
  },
): UrlElicitationRequiredError | InputRequiredResult | undefined {
  const failure = call.status === "failed" ? call.result?.failure : undefined;
  const connection = failure?.kind === "connection_required" ? failure.connection : undefined;
  const url = connection?.connectUrl;
  if (!failure || !connection || !url || !isWebUrl(url)) return undefined;
  if (!caller.urlElicitation || !caller.againRunsNew) return undefined;
  const message = failure.message;
  if (caller.era === "legacy") {
    return new UrlElicitationRequiredError(
      [{ mode: "url", elicitationId: connectElicitationId(call), url, message }],
      message,
    );
  }
  const key = connectKey(connection.provider);
  if (caller.inputResponses?.[key] !== undefined) return undefined;
  // No requestState: the retry is a new call, with nothing of this one to carry.
  return inputRequired({ inputRequests: { [key]: inputRequired.elicitUrl({ message, url }) } });
}

/**
 * A failed call's text for the agent: the failure's message, and for a missing connection
 * where a person connects it and that the tool can be called again once they did.
 */
export function failureText(failure: Failure, again: string): string {
  const connection = failure.kind === "connection_required" ? failure.connection : undefined;
  if (!connection) return failure.message;
  const { provider, connectUrl } = connection;
  const where = connectUrl
    ? failure.message.includes(connectUrl)
      ? ""
      : ` A person connects their ${provider} account by opening ${connectUrl} in a browser.`
    : ` A person connects their ${provider} account in Toolbus: POST /v1/connections/${provider} ` +
      "gives a link to open in a browser.";
  return `${failure.message}${where} ${again} once it is connected.`;
}

function isObject(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A URL a client can open (the spec's `format: uri`, and only the web's schemes). */
function isWebUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "https:" || protocol === "http:";
  } catch {
    return false;
  }
}
