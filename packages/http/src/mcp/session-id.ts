import { randomBytes } from "node:crypto";
import type { RelayCapabilities } from "@toolbus/wire/model/relay";
import { z } from "zod";

/*
 * The `Mcp-Session-Id` Toolbus hands a 2025-11-25 (or older Streamable HTTP) client that
 * initializes: not a session, which the stateless `/mcp` keeps none of, but what the client
 * declared in its `initialize` that later requests need (each has a new server, which never
 * sees the `initialize`), carried by the client on every request as the spec has it do.
 *
 * `tb1.<base64url JSON>.<random>`: versioned, visible ASCII (0x21-0x7E, as the spec requires
 * of session ids), unique per `initialize`. Unsigned: a client that forges one changes only
 * what is offered to itself, which its `initialize` could have declared all the same. Read
 * defensively: anything but a well-formed one of this version counts as none sent, never as
 * an error.
 */

/** The session id's header, as the transports read and write it. */
export const SESSION_ID_HEADER = "mcp-session-id";

const VERSION = "tb1";
/** Longer than any this version mints (about 130 characters); anything longer is not read. */
const MAX_LENGTH = 512;
const SHAPE = /^tb1\.([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{16,64})$/;

const empty = z.object({}).strict();

/** What a session id carries: the client capabilities a relayed request or a connect needs. */
const carried = z
  .object({
    /** Its elicitation modes (an empty `elicitation` is form mode, as 2025-11-25 says). */
    elicitation: z.object({ form: empty.optional(), url: empty.optional() }).strict().optional(),
    /** Sampling, with the parts of it a server may rely on. */
    sampling: z.object({ context: empty.optional(), tools: empty.optional() }).strict().optional(),
    roots: empty.optional(),
  })
  .strict();

/**
 * What of a client's `initialize` capabilities the session id keeps: its elicitation modes,
 * sampling (and its `context` / `tools`) and roots, each only if declared as an object.
 */
export function carriedCapabilities(capabilities: unknown): RelayCapabilities {
  if (!isObject(capabilities)) return {};
  const kept: RelayCapabilities = {};
  const { elicitation, sampling, roots } = capabilities;
  if (isObject(elicitation)) {
    const url = isObject(elicitation.url);
    // No mode named: form only, the generations before modes and 2025-11-25 alike.
    const form = isObject(elicitation.form) || !url;
    kept.elicitation = { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) };
  }
  if (isObject(sampling)) {
    kept.sampling = {
      ...(isObject(sampling.context) ? { context: {} } : {}),
      ...(isObject(sampling.tools) ? { tools: {} } : {}),
    };
  }
  if (isObject(roots)) kept.roots = {};
  return kept;
}

/** A new session id carrying what a client declared in its `initialize`. */
export function mintSessionId(initializeCapabilities: unknown): string {
  const payload = JSON.stringify(carriedCapabilities(initializeCapabilities));
  const nonce = randomBytes(16).toString("base64url");
  return `${VERSION}.${Buffer.from(payload).toString("base64url")}.${nonce}`;
}

/**
 * What a session id of this version says its client declared; undefined for none, or for
 * anything else (another version, another server's id, too long, altered): as if none was sent.
 */
export function readSessionId(value: string | null | undefined): RelayCapabilities | undefined {
  if (typeof value !== "string" || value.length > MAX_LENGTH) return undefined;
  const payload = SHAPE.exec(value)?.[1];
  if (payload === undefined) return undefined;
  try {
    const parsed = carried.safeParse(
      JSON.parse(Buffer.from(payload, "base64url").toString("utf8")),
    );
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The `initialize` request a POST's body is, with the capabilities it declares. */
export function initializeIn(body: unknown): { capabilities: unknown } | undefined {
  if (!isObject(body) || body.method !== "initialize" || !("id" in body)) return undefined;
  const params = isObject(body.params) ? body.params : {};
  return { capabilities: params.capabilities };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
