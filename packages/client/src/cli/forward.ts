import { deliveryBody, webhookHeaders, webhookIdOf } from "@toolbus/wire/webhooks";
import { describeCause } from "../http.js";
import type { RunEvent } from "../schemas.js";

/** A receiver that takes longer than this is reported as failed, and listening goes on. */
const FORWARD_TIMEOUT_MS = 10_000;
/** How much of a failed answer is shown: enough for an error message, not a whole page. */
const EXCERPT_CHARS = 200;

export interface ForwardTarget {
  url: string;
  secret: string;
  timeoutMs?: number;
}

/** How a forward went: the receiver's status, or why there was none. */
export type ForwardOutcome =
  | { ok: true; webhookId: string; status: number }
  | { ok: false; webhookId: string; status?: number; error: string };

/**
 * POSTs one event to the receiver, signed, and says what it answered; it never throws for what
 * the receiver did. A 2xx is success, as for subscriptions; redirects are not followed, since
 * a subscription would not follow them either. Aborted with `signal`, it rejects.
 */
export async function forwardEvent(
  event: RunEvent,
  target: ForwardTarget,
  signal?: AbortSignal,
): Promise<ForwardOutcome> {
  const body = deliveryBody(event);
  const webhookId = webhookIdOf(event.eventKey);
  const headers = {
    "content-type": "application/json",
    ...webhookHeaders({
      secret: target.secret,
      id: webhookId,
      timestamp: Math.floor(Date.now() / 1000),
      body,
    }),
  };
  const timeoutMs = target.timeoutMs ?? FORWARD_TIMEOUT_MS;
  const attempt = new AbortController();
  const timer = setTimeout(
    () => attempt.abort(new Error(`no answer within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  const stop = () => attempt.abort(signal?.reason);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const response = await fetch(target.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: attempt.signal,
    });
    if (response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, webhookId, status: response.status };
    }
    const text = (await response.text().catch(() => "")).replace(/\s+/g, " ").trim();
    const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}...` : text;
    const reason = `answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
    return {
      ok: false,
      webhookId,
      status: response.status,
      error: excerpt ? `${reason}: ${excerpt}` : reason,
    };
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    const reason = attempt.signal.aborted
      ? String((attempt.signal.reason as Error).message)
      : describeCause(error) || String(error);
    return { ok: false, webhookId, error: `no answer: ${reason}` };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
  }
}
