import type { Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import { ToolFailure } from "../tool-definition";
import { OutboundError } from "./errors";
import type { OutboundResponse } from "./types";

/**
 * One mapping from what an upstream did to what an agent should do, shared by every tool so
 * the same situation always reads the same way.
 */
export function failureFromOutbound(error: unknown, upstream: string): ToolFailure {
  if (!(error instanceof OutboundError)) {
    return new ToolFailure(Failures.internal(`${upstream} could not be reached.`), {
      cause: error,
    });
  }
  const byKind: Record<OutboundError["kind"], Failure> = {
    timeout: Failures.timeout(`${upstream} did not answer in time.`),
    aborted: Failures.timeout(`The call to ${upstream} was cut off by the tool's timeout.`),
    network: Failures.upstreamError(`${upstream} could not be reached.`),
    too_large: Failures.upstreamError(`${upstream} sent a response larger than allowed.`, {
      retryable: false,
    }),
    too_many_redirects: Failures.upstreamError(`${upstream} redirected too many times.`, {
      retryable: false,
    }),
    blocked: Failures.unavailable(`${upstream} resolves to an address this stage may not reach.`),
    invalid_url: Failures.upstreamError(`${upstream}'s address is not a valid URL.`, {
      retryable: false,
    }),
  };
  return new ToolFailure(byKind[error.kind], { cause: error });
}

/**
 * Turns a non-2xx answer into the failure an agent can act on; returns undefined for 2xx.
 * 429 carries Retry-After as retryAfterMs; 401/403 mean the stage's credentials are wrong.
 */
export function failureFromStatus(
  response: OutboundResponse,
  upstream: string,
): ToolFailure | undefined {
  const { status } = response;
  if (status >= 200 && status < 300) return undefined;
  if (status === 429) {
    const retryAfterMs = retryAfter(response.headers.get("retry-after"));
    return new ToolFailure(
      Failures.rateLimited(`${upstream} is rate limiting requests.`, retryAfterMs),
    );
  }
  if (status === 401 || status === 403) {
    return new ToolFailure(
      Failures.unavailable(`${upstream} refused this stage's credentials (${status}).`),
    );
  }
  if (status === 404) {
    return new ToolFailure(
      Failures.upstreamError(`${upstream} has no such resource (404).`, {
        retryable: false,
        recovery: "correct_call",
      }),
    );
  }
  if (status >= 400 && status < 500) {
    return new ToolFailure(
      Failures.upstreamError(`${upstream} rejected the request (${status}).`, {
        retryable: false,
        recovery: "correct_call",
      }),
    );
  }
  return new ToolFailure(Failures.upstreamError(`${upstream} failed (${status}).`));
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function retryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
