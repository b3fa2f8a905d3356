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

/**
 * A ToolbusError class for one HTTP status. Its one name is given here, as a string, because
 * minified bundles rename classes: the class and its errors both carry it.
 */
function httpErrorClass(name: string, code: string, status: number) {
  const ErrorClass = class extends ToolbusError {
    override readonly code = code;
    override readonly status = status;
    constructor(...args: ConstructorParameters<typeof ToolbusError>) {
      super(...args);
      this.name = name;
    }
  };
  Object.defineProperty(ErrorClass, "name", { value: name });
  return ErrorClass;
}

export const ValidationError = httpErrorClass("ValidationError", "invalid_request", 400);
export type ValidationError = InstanceType<typeof ValidationError>;
export const UnauthorizedError = httpErrorClass("UnauthorizedError", "unauthorized", 401);
export type UnauthorizedError = InstanceType<typeof UnauthorizedError>;
export const ForbiddenError = httpErrorClass("ForbiddenError", "forbidden", 403);
export type ForbiddenError = InstanceType<typeof ForbiddenError>;
export const NotFoundError = httpErrorClass("NotFoundError", "not_found", 404);
export type NotFoundError = InstanceType<typeof NotFoundError>;
export const ConflictError = httpErrorClass("ConflictError", "conflict", 409);
export type ConflictError = InstanceType<typeof ConflictError>;
export const PayloadTooLargeError = httpErrorClass(
  "PayloadTooLargeError",
  "payload_too_large",
  413,
);
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>;
export const RateLimitedError = httpErrorClass("RateLimitedError", "rate_limited", 429);
export type RateLimitedError = InstanceType<typeof RateLimitedError>;
/** A dependency (DynamoDB, the bus) is unreachable: the caller may retry later. */
export const UnavailableError = httpErrorClass("UnavailableError", "unavailable", 503);
export type UnavailableError = InstanceType<typeof UnavailableError>;
/** Publishing to the bus failed after every retry; names the entries that did not go out. */
export const PublishError = httpErrorClass("PublishError", "publish_failed", 503);
export type PublishError = InstanceType<typeof PublishError>;

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
