import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ValidationError } from "../errors";

/**
 * Webhook signatures in the Standard Webhooks scheme (symmetric `v1`): an HMAC-SHA256 of
 * `${id}.${timestamp}.${body}` keyed by the subscription's secret, so any Standard Webhooks
 * library verifies what we send without Toolbus-specific code.
 */

const WEBHOOK_SECRET_PREFIX = "whsec_";
/** Replays older (or clocks further ahead) than this are refused, as the reference libraries do. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;
/** 24 bytes is the shortest key the reference test vectors use; 64 is HMAC-SHA256's block size. */
const MIN_WEBHOOK_SECRET_BYTES = 24;
const MAX_WEBHOOK_SECRET_BYTES = 64;
const NEW_SECRET_BYTES = 32;

/** Standard base64 (not base64url), padded: what the reference libraries decode. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/**
 * The id is signed as `${id}.${timestamp}.${body}`: a `.` in it would let two different
 * (id, timestamp) pairs sign the same bytes, and whitespace or controls cannot go in a header.
 */
const WEBHOOK_ID = /^[A-Za-z0-9_:-]{1,256}$/;
/** Unix seconds as digits only; 12 digits reach the year 33658, more is an attack or a bug. */
const TIMESTAMP_HEADER = /^[0-9]{1,12}$/;
const SIGNATURE_VERSION = "v1";

/** One secret, or several while a secret is rotated (each one signs; receivers need one match). */
export type WebhookSecrets =
  | { secret: string; secrets?: never }
  | { secrets: readonly string[]; secret?: never };

export type WebhookSigningInput = WebhookSecrets & {
  /** Stays the same across retries: receivers use it to process each event once. */
  id: string;
  /** Unix seconds of this attempt (not of the event): it is what bounds replays. */
  timestamp: number;
  /** The exact request body; a re-serialised equivalent would not verify. */
  body: string;
};

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** A fresh secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(NEW_SECRET_BYTES).toString("base64")}`;
}

/** Whether `value` is a secret `webhookSecretKey` accepts. */
export function isWebhookSecret(value: unknown): value is string {
  return typeof value === "string" && decodeSecret(value) !== undefined;
}

/**
 * The HMAC key of a secret. Throws ValidationError for anything but `whsec_` followed by
 * canonical base64 of 24 to 64 bytes; the message never repeats the secret.
 */
export function webhookSecretKey(secret: string): Buffer {
  const key = decodeSecret(secret);
  if (!key) {
    throw new ValidationError(
      `a webhook secret is "${WEBHOOK_SECRET_PREFIX}" followed by the base64 of ` +
        `${MIN_WEBHOOK_SECRET_BYTES} to ${MAX_WEBHOOK_SECRET_BYTES} bytes`,
    );
  }
  return key;
}

/**
 * The `webhook-signature` header value: `v1,<base64 HMAC>` per secret, space-separated, in the
 * order given (so the newest secret can go first during a rotation).
 */
export function signWebhook(input: WebhookSigningInput): string {
  const id = checkId(input.id);
  const timestamp = checkTimestamp(input.timestamp);
  const signatures = secretsOf(input).map(
    (secret) => `${SIGNATURE_VERSION},${hmac(webhookSecretKey(secret), id, timestamp, input.body)}`,
  );
  return [...new Set(signatures)].join(" ");
}

/** The three Standard Webhooks headers for one delivery attempt. */
export function webhookHeaders(input: WebhookSigningInput): WebhookHeaders {
  return {
    "webhook-id": checkId(input.id),
    "webhook-timestamp": String(checkTimestamp(input.timestamp)),
    "webhook-signature": signWebhook(input),
  };
}

export type WebhookVerification =
  | { ok: true; id: string; timestamp: number }
  | { ok: false; reason: WebhookRejection };

export type WebhookRejection =
  | "missing_headers"
  | "malformed_headers"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "no_matching_signature";

export type WebhookVerificationInput = WebhookSecrets & {
  /** Request headers, any case: a Fetch Headers or node's `IncomingMessage.headers`. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The raw request body, exactly as received. */
  body: string;
  /** Unix seconds; defaults to the clock. */
  now?: number;
  toleranceSeconds?: number;
};

/**
 * Checks a received webhook: headers present and well formed, timestamp within the tolerance
 * (both ways: a clock far ahead is as suspect as a replay), and at least one `v1` signature
 * made with one of the secrets. Signatures of other schemes (`v1a`) are skipped, not refused.
 */
export function verifyWebhook(input: WebhookVerificationInput): WebhookVerification {
  const keys = secretsOf(input).map(webhookSecretKey);
  const id = header(input.headers, "webhook-id");
  const timestampHeader = header(input.headers, "webhook-timestamp");
  const signatureHeader = header(input.headers, "webhook-signature");
  if (id === undefined || timestampHeader === undefined || signatureHeader === undefined) {
    return { ok: false, reason: "missing_headers" };
  }
  if (
    id === null ||
    timestampHeader === null ||
    signatureHeader === null ||
    !WEBHOOK_ID.test(id) ||
    !TIMESTAMP_HEADER.test(timestampHeader)
  ) {
    return { ok: false, reason: "malformed_headers" };
  }

  const timestamp = Number(timestampHeader);
  const now = input.now ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (timestamp < now - tolerance) return { ok: false, reason: "timestamp_too_old" };
  if (timestamp > now + tolerance) return { ok: false, reason: "timestamp_too_new" };

  const offered = signatureHeader
    .split(" ")
    .filter((entry) => entry.startsWith(`${SIGNATURE_VERSION},`))
    .map((entry) => Buffer.from(entry.slice(SIGNATURE_VERSION.length + 1), "utf8"));
  for (const key of keys) {
    // Base64 text is compared, not decoded bytes: Node's decoder skips junk characters, so
    // comparing bytes would accept altered spellings of a valid signature.
    const expected = Buffer.from(hmac(key, id, timestamp, input.body), "utf8");
    for (const signature of offered) {
      if (signature.length === expected.length && timingSafeEqual(signature, expected)) {
        return { ok: true, id, timestamp };
      }
    }
  }
  return { ok: false, reason: "no_matching_signature" };
}

function hmac(key: Buffer, id: string, timestamp: number, body: string): string {
  return createHmac("sha256", key).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64");
}

function decodeSecret(secret: string): Buffer | undefined {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  // Canonical only: unused low bits in the last character would let two spellings be one key.
  if (key.toString("base64") !== encoded) return undefined;
  if (key.length < MIN_WEBHOOK_SECRET_BYTES || key.length > MAX_WEBHOOK_SECRET_BYTES) {
    return undefined;
  }
  return key;
}

function secretsOf(input: WebhookSecrets): readonly string[] {
  const secrets = input.secrets ?? (input.secret === undefined ? [] : [input.secret]);
  if (secrets.length === 0) throw new ValidationError("at least one webhook secret is needed");
  return secrets;
}

function checkId(id: string): string {
  if (!WEBHOOK_ID.test(id)) {
    throw new ValidationError("a webhook id is 1 to 256 letters, digits, '_', ':' or '-'");
  }
  return id;
}

function checkTimestamp(timestamp: number): number {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new ValidationError("a webhook timestamp is a whole number of unix seconds");
  }
  return timestamp;
}

/**
 * One header's value: undefined when absent or empty, null when it cannot be trusted (sent
 * twice, so a proxy and the sender may disagree on which one counts).
 */
function header(
  headers: WebhookVerificationInput["headers"],
  name: string,
): string | null | undefined {
  let value: string | string[] | null | undefined;
  if (headers instanceof Headers) {
    value = headers.get(name);
  } else {
    const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  if (Array.isArray(value)) {
    if (value.length > 1) return null;
    value = value[0];
  }
  return value === null || value === undefined || value === "" ? undefined : value;
}

/**
 * A delivery's `webhook-id`: the same for every attempt and redrive of one event. Derived from
 * the event key, not the key itself: Standard Webhooks ids are signed as `id.timestamp.body`,
 * so they must not hold a `.`, and event keys hold the caller's run and call ids (which may,
 * and carry `/` too). The event key itself is in the body (`data.eventKey`).
 */
export function webhookIdOf(eventKey: string): string {
  return `evt_${createHash("sha256").update(eventKey).digest("hex").slice(0, 32)}`;
}
