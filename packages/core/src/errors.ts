import type { z } from "zod";

/**
 * Base class of every error core raises on purpose. `code` and `status` are what the API
 * shows; `context` is for logs and never leaves the process.
 */
export class ToolbusError extends Error {
  override name = "ToolbusError";
  readonly code: string = "internal";
  readonly status: number = 500;
  readonly details: unknown;
  readonly context: Record<string, unknown>;

  constructor(
    message: string,
    options: { cause?: unknown; details?: unknown; context?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.details = options.details;
    this.context = options.context ?? {};
  }
}

export class ValidationError extends ToolbusError {
  override name = "ValidationError";
  override readonly code = "invalid_request";
  override readonly status = 400;
}

export class UnauthorizedError extends ToolbusError {
  override name = "UnauthorizedError";
  override readonly code = "unauthorized";
  override readonly status = 401;
}

export class ForbiddenError extends ToolbusError {
  override name = "ForbiddenError";
  override readonly code = "forbidden";
  override readonly status = 403;
}

export class NotFoundError extends ToolbusError {
  override name = "NotFoundError";
  override readonly code = "not_found";
  override readonly status = 404;
}

export class ConflictError extends ToolbusError {
  override name = "ConflictError";
  override readonly code = "conflict";
  override readonly status = 409;
}

export class PayloadTooLargeError extends ToolbusError {
  override name = "PayloadTooLargeError";
  override readonly code = "payload_too_large";
  override readonly status = 413;
}

export class RateLimitedError extends ToolbusError {
  override name = "RateLimitedError";
  override readonly code = "rate_limited";
  override readonly status = 429;
}

/** A dependency (DynamoDB, the bus) is unreachable: the caller may retry later. */
export class UnavailableError extends ToolbusError {
  override name = "UnavailableError";
  override readonly code = "unavailable";
  override readonly status = 503;
}

/** Publishing to the bus failed after every retry; names the entries that did not go out. */
export class PublishError extends ToolbusError {
  override name = "PublishError";
  override readonly code = "publish_failed";
  override readonly status = 503;
}

/**
 * What a caller is told of an error of ours, over REST and MCP alike. A PublishError names
 * bus error codes, internal words, so it gets a fixed message saying how to recover.
 */
export function callerMessage(error: ToolbusError): string {
  return error instanceof PublishError
    ? "The call was recorded but could not be announced; retry the same request with the same call id."
    : error.message;
}

/** One problem with a value, named by its path: what every 400 lists in `details`. */
export interface Issue {
  path: string;
  message: string;
}

/**
 * zod issues as Issues, one per failing path: an unknown key is named by its own path, not its
 * parent's. `root` names the value itself when the path is empty.
 */
export function zodIssues(issues: readonly z.core.$ZodIssue[], root = "(input)"): Issue[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...at, key].join("."), message: "unknown field" }));
    }
    return [{ path: at.join(".") || root, message: issue.message }];
  });
}
