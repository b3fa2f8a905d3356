import { type WebhookSecrets, webhookHeaders } from "@toolbus/wire/webhooks/signature";
import { OutboundError } from "../outbound/errors";
import { retryAfter } from "../outbound/failures";
import type { HttpClient, OutboundErrorKind, OutboundResponse } from "../outbound/types";

/** Standard Webhooks recommends 15 to 30 s; the low end keeps a worker's batch moving. */
export const WEBHOOK_TIMEOUT_MS = 15_000;
/**
 * The most of a receiver's answer we read. Only an excerpt is kept, but the outbound client
 * fails a larger body outright (status unknown), so the cap sits well above the small bodies
 * receivers send back, error pages of proxies and CDNs included.
 */
export const WEBHOOK_RESPONSE_MAX_BYTES = 64 * 1024;
/** How much of a failed answer is kept for the subscription's failure view. */
export const RESPONSE_EXCERPT_CHARS = 500;

export type WebhookDelivery = WebhookSecrets & {
  url: string;
  /** The same for every attempt of one event: receivers deduplicate by it. */
  id: string;
  /** Unix seconds of this attempt, which is what receivers check for replays. */
  timestamp: number;
  /** The JSON body, sent and signed byte for byte. */
  body: string;
  timeoutMs?: number;
  /** Stops the attempt (e.g. when the worker runs out of time); the outcome is retryable. */
  signal?: AbortSignal;
  /** Epoch ms, to turn a Retry-After date into a wait; defaults to the clock. */
  now?: number;
};

export interface WebhookSuccess {
  ok: true;
  status: number;
  durationMs: number;
}

export type WebhookFailureKind = "status" | "redirect" | "gone" | OutboundErrorKind;

export interface WebhookFailure {
  ok: false;
  /** Whether another attempt may succeed (every non-2xx but 410, and lost connections). */
  retryable: boolean;
  /** The receiver answered 410 Gone: stop delivering to this URL (disable the subscription). */
  gone?: true;
  kind: WebhookFailureKind;
  /** The HTTP status, when the receiver answered at all. */
  status?: number;
  /** How long the receiver asked us to wait (Retry-After), for `retryDelayMs`. */
  retryAfterMs?: number;
  /** Where a redirect pointed, sanitized: the URL the subscription should use instead. */
  location?: string;
  /** What went wrong, for people; never holds the secret or the body we sent. */
  error: string;
  /** The start of the receiver's answer, control characters removed. */
  responseExcerpt?: string;
  durationMs: number;
}

export type WebhookOutcome = WebhookSuccess | WebhookFailure;

/**
 * Makes one signed delivery attempt and says how it went; it never retries itself (the
 * schedule in backoff.ts does, with each attempt recorded and signed afresh) and never rejects
 * for what the receiver did. It throws only for invalid input (a malformed secret or id).
 */
export async function sendWebhook(
  http: HttpClient,
  delivery: WebhookDelivery,
): Promise<WebhookOutcome> {
  const timeoutMs = delivery.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const headers = { "content-type": "application/json", ...webhookHeaders(delivery) };
  const started = performance.now();
  let response: OutboundResponse;
  try {
    response = await http.request(delivery.url, {
      method: "POST",
      headers,
      body: delivery.body,
      timeoutMs,
      maxBytes: WEBHOOK_RESPONSE_MAX_BYTES,
      // Standard Webhooks: a redirect is a failure. Following one would also re-send the
      // signed body to a URL the subscriber never registered.
      followRedirects: false,
      retries: 0,
      ...(delivery.signal ? { signal: delivery.signal } : {}),
    });
  } catch (error) {
    return fromError(error, { timeoutMs, durationMs: since(started) });
  }
  return fromResponse(response, delivery, since(started));
}

/**
 * Every non-2xx answer is retried except 410 Gone. Receivers answer 4xx for mistakes they can
 * fix while the schedule runs (an auth check misconfigured, a route not deployed yet, a URL
 * that now redirects, fixed by updating the subscription before its next attempt), and they
 * must deduplicate by webhook-id anyway, so a retry costs little while a dropped event is lost
 * for good. 410 is the one status that means "stop": the caller disables the subscription.
 */
function fromResponse(
  response: OutboundResponse,
  delivery: WebhookDelivery,
  durationMs: number,
): WebhookOutcome {
  const { status } = response;
  if (status >= 200 && status <= 299) return { ok: true, status, durationMs };

  const excerpt = excerptOf(response.text());
  const base = {
    ok: false as const,
    status,
    durationMs,
    ...(excerpt ? { responseExcerpt: excerpt } : {}),
  };
  if (status >= 300 && status <= 399) {
    const location = redirectTarget(response.headers.get("location"), delivery.url);
    return {
      ...base,
      retryable: true,
      kind: "redirect",
      ...(location ? { location } : {}),
      error:
        `the receiver redirected (${status})${location ? ` to ${location}` : ""}; ` +
        "webhooks do not follow redirects, so the subscription needs the final URL",
    };
  }
  if (status === 410) {
    return {
      ...base,
      retryable: false,
      gone: true,
      kind: "gone",
      error: "the receiver answered 410 Gone: it wants no more webhooks at this URL",
    };
  }
  const waitMs = retryAfter(response.headers.get("retry-after"), delivery.now ?? Date.now());
  return {
    ...base,
    retryable: true,
    kind: "status",
    ...(waitMs !== undefined && Number.isFinite(waitMs) ? { retryAfterMs: waitMs } : {}),
    error: `the receiver answered ${status}`,
  };
}

/**
 * Requests that got no usable answer. Only the SSRF guard's refusals are final: the URL will
 * not become reachable by waiting. A body over the cap is retried like a lost connection,
 * since its status (maybe 2xx) was never seen.
 */
function fromError(
  error: unknown,
  attempt: { timeoutMs: number; durationMs: number },
): WebhookFailure {
  const { durationMs } = attempt;
  if (!(error instanceof OutboundError)) {
    return { ok: false, retryable: true, kind: "network", error: "the request failed", durationMs };
  }
  const messages: Partial<Record<OutboundErrorKind, string>> = {
    blocked: `${error.message}; webhooks are only sent to public addresses`,
    timeout: `the receiver did not answer within ${attempt.timeoutMs} ms`,
    too_large: `the receiver's answer was larger than ${WEBHOOK_RESPONSE_MAX_BYTES} bytes; a short body (or none) is enough`,
  };
  return {
    ok: false,
    retryable: error.kind !== "blocked" && error.kind !== "invalid_url",
    kind: error.kind,
    error: messages[error.kind] ?? error.message,
    durationMs,
  };
}

/** The Location header as an absolute URL where it parses, sanitized either way. */
function redirectTarget(location: string | null, base: string): string | undefined {
  if (!location) return undefined;
  let target = location;
  try {
    target = new URL(location, base).href;
  } catch {
    // Shown as sent: a broken Location is itself what the receiver has to fix.
  }
  return excerptOf(target);
}

/**
 * Receiver text made safe to show in a terminal or a page: control and format characters
 * (escape sequences, bidi overrides, zero-width characters) become spaces, runs of space one,
 * and the result is cut to RESPONSE_EXCERPT_CHARS code points.
 */
export function excerptOf(text: string): string | undefined {
  const clean = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (clean === "") return undefined;
  const chars = Array.from(clean);
  if (chars.length <= RESPONSE_EXCERPT_CHARS) return clean;
  return `${chars.slice(0, RESPONSE_EXCERPT_CHARS - 1).join("")}…`;
}

function since(started: number): number {
  return Math.round(performance.now() - started);
}
