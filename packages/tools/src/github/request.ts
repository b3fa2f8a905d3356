import {
  failureFromOutbound,
  failureFromStatus,
  type HttpClient,
  type OutboundResponse,
  retryAfter,
} from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";

export const GITHUB_TOKEN = "GITHUB_TOKEN";
const LABEL = "GitHub";

/** The REST API version every request pins, so answers keep the shape parsed here. */
export const GITHUB_API_VERSION = "2022-11-28";

/** What a request needs from the tool's context. */
export interface GitHubContext {
  http: HttpClient;
  secret(name: string): string | undefined;
  signal: AbortSignal;
  now(): Date;
}

export interface GitHubRequest {
  /** API path with its query, after the base URL: `/repos/o/r/releases?per_page=10`. */
  path: string;
  /** Media type; default `application/vnd.github+json`. */
  accept?: string;
  maxBytes?: number;
  /** The 404 message: what was not found, in the caller's words. */
  notFound: string;
}

/**
 * One authenticated GET against the REST API. Non-2xx answers become failures an agent can
 * act on, with GitHub's rate-limit headers read for when to come back.
 */
export async function githubGet(
  context: GitHubContext,
  baseUrl: string,
  request: GitHubRequest,
): Promise<OutboundResponse> {
  const token = context.secret(GITHUB_TOKEN);
  if (!token) {
    throw new ToolFailure(
      Failures.unavailable(
        `github_api needs the secret ${GITHUB_TOKEN}, which is not set on this stage.`,
      ),
    );
  }
  let response: OutboundResponse;
  try {
    response = await context.http.request(`${baseUrl.replace(/\/+$/, "")}${request.path}`, {
      method: "GET",
      headers: {
        accept: request.accept ?? "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": GITHUB_API_VERSION,
      },
      ...(request.maxBytes !== undefined ? { maxBytes: request.maxBytes } : {}),
      signal: context.signal,
    });
  } catch (error) {
    throw failureFromOutbound(error, LABEL);
  }
  const failure = githubFailure(response, request.notFound, context.now());
  if (failure) throw failure;
  return response;
}

/** GitHub's advice when a secondary rate limit names no time: wait at least a minute. */
const SECONDARY_LIMIT_WAIT_MS = 60_000;

/** The failure for a non-2xx GitHub answer, or undefined for 2xx. */
export function githubFailure(
  response: OutboundResponse,
  notFound: string,
  now: Date,
): ToolFailure | undefined {
  const { status, headers } = response;
  if (status >= 200 && status < 300) return undefined;
  if (status === 403 || status === 429) {
    const exhausted = headers.get("x-ratelimit-remaining") === "0";
    const after = retryAfter(headers.get("retry-after"), now.getTime());
    if (status === 429 || exhausted || after !== undefined || mentionsRateLimit(response)) {
      const retryAfterMs = after ?? untilReset(headers.get("x-ratelimit-reset"), now);
      return new ToolFailure(
        Failures.rateLimited(
          exhausted
            ? "GitHub's rate limit for this stage's token is used up."
            : "GitHub is rate limiting requests from this stage.",
          retryAfterMs ?? SECONDARY_LIMIT_WAIT_MS,
        ),
      );
    }
    return new ToolFailure(
      Failures.unavailable(
        "GitHub refused access (403): the stage's token lacks the permission this request needs.",
      ),
    );
  }
  if (status === 401) {
    return new ToolFailure(
      Failures.unavailable(
        `GitHub rejected ${GITHUB_TOKEN} (401): it is wrong, expired or revoked.`,
      ),
    );
  }
  if (status === 404 || status === 410) {
    return new ToolFailure(
      Failures.upstreamError(`${notFound} (GitHub answered ${status}).`, {
        retryable: false,
        recovery: "correct_call",
      }),
    );
  }
  if (status === 422) {
    const detail = errorMessage(response);
    return new ToolFailure(
      Failures.upstreamError(
        `GitHub could not process the request (422)${detail ? `: ${detail}` : ""}.`,
        { retryable: false, recovery: "correct_call" },
      ),
    );
  }
  return failureFromStatus(response, LABEL);
}

/** `x-ratelimit-reset` is when the window resets, in epoch seconds. */
function untilReset(header: string | null, now: Date): number | undefined {
  const reset = Number(header);
  if (header === null || !Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.max(0, Math.ceil(reset * 1000 - now.getTime()));
}

function mentionsRateLimit(response: OutboundResponse): boolean {
  return /rate limit/i.test(errorMessage(response) ?? "");
}

/** GitHub's own error `message`, shortened; it never carries request headers. */
function errorMessage(response: OutboundResponse): string | undefined {
  try {
    const body = response.json() as { message?: unknown };
    if (typeof body?.message !== "string") return undefined;
    const message = body.message.replace(/\s+/g, " ").trim();
    return message.length > 200 ? `${message.slice(0, 199)}…` : message;
  } catch {
    return undefined;
  }
}

/** The body as JSON, or the failure for a body that is not. */
export function readJson(response: OutboundResponse): unknown {
  try {
    return response.json();
  } catch (error) {
    throw unreadable(error);
  }
}

export function unreadable(cause?: unknown): ToolFailure {
  return new ToolFailure(
    Failures.upstreamError(`${LABEL} returned a response Toolbus could not read.`),
    { cause },
  );
}
