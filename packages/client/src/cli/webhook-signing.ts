import { createHash, createHmac, randomBytes } from "node:crypto";

// Standard Webhooks signing for `toolbus listen --forward-to`, the way Toolbus's own webhooks
// sign (packages/core/src/subscriptions/webhook-signature.ts and targets.ts). Written out here
// because the published client carries no @toolbus/core code beyond what its entry points
// bundle, and core exports neither the signer nor webhookIdOf; test/cli-listen.test.ts checks
// that a forwarded event has the webhook-id a subscription's delivery of it has, and that a
// Standard Webhooks library verifies the signature.

const SECRET_PREFIX = "whsec_";
/** The bounds core accepts: 24 bytes is the reference vectors' shortest, 64 HMAC's block. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const NEW_SECRET_BYTES = 32;
/** Standard base64 (not base64url), padded: what the reference libraries decode. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A fresh secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(NEW_SECRET_BYTES).toString("base64")}`;
}

/** Whether `value` is a secret core would sign with: `whsec_` and canonical base64 of 24-64 bytes. */
export function isWebhookSecret(value: string): boolean {
  return secretKey(value) !== undefined;
}

/**
 * The `webhook-id` Toolbus's webhooks give an event: derived from the event key, which may
 * hold `.` (ids are signed as `id.timestamp.body`) and `/`. Receivers deduplicate by it, so a
 * forwarded event and a subscription's delivery of it count as one.
 */
export function webhookIdOf(eventKey: string): string {
  return `evt_${createHash("sha256").update(eventKey).digest("hex").slice(0, 32)}`;
}

export interface SigningInput {
  secret: string;
  id: string;
  /** Unix seconds of this attempt: what receivers check against replays. */
  timestamp: number;
  /** The exact body sent; a re-serialised equivalent would not verify. */
  body: string;
}

/** The three Standard Webhooks headers: `v1,` and the HMAC-SHA256 of `id.timestamp.body`. */
export function webhookHeaders(input: SigningInput): Record<string, string> {
  const key = secretKey(input.secret);
  if (!key) throw new Error("Not a webhook secret (whsec_ and the base64 of 24 to 64 bytes).");
  const signature = createHmac("sha256", key)
    .update(`${input.id}.${input.timestamp}.${input.body}`, "utf8")
    .digest("base64");
  return {
    "webhook-id": input.id,
    "webhook-timestamp": String(input.timestamp),
    "webhook-signature": `v1,${signature}`,
  };
}

function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  // Canonical only, as core: unused low bits would let two spellings be one key.
  if (key.toString("base64") !== encoded) return undefined;
  return key.length >= MIN_SECRET_BYTES && key.length <= MAX_SECRET_BYTES ? key : undefined;
}
