import type { z } from "zod";
import { nearest } from "./util/nearest";
import { knownKeysAt } from "./util/schema-keys";

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
 * The base of a ToolbusError class for one HTTP status. Its name is given as a string because
 * minified bundles rename classes; errors carry it as `name`.
 */
function httpErrorClass(name: string, code: string, status: number) {
  return class extends ToolbusError {
    override readonly code = code;
    override readonly status = status;
    constructor(...args: ConstructorParameters<typeof ToolbusError>) {
      super(...args);
      this.name = name;
    }
  };
}

export class ValidationError extends httpErrorClass("ValidationError", "invalid_request", 400) {}
export class UnauthorizedError extends httpErrorClass("UnauthorizedError", "unauthorized", 401) {}
export class ForbiddenError extends httpErrorClass("ForbiddenError", "forbidden", 403) {}
export class NotFoundError extends httpErrorClass("NotFoundError", "not_found", 404) {}
export class ConflictError extends httpErrorClass("ConflictError", "conflict", 409) {}
export class PayloadTooLargeError extends httpErrorClass(
  "PayloadTooLargeError",
  "payload_too_large",
  413,
) {}
export class RateLimitedError extends httpErrorClass("RateLimitedError", "rate_limited", 429) {}
/** A dependency (DynamoDB, the bus) is unreachable: the caller may retry later. */
export class UnavailableError extends httpErrorClass("UnavailableError", "unavailable", 503) {}
/** Publishing to the bus failed after every retry; names the entries that did not go out. */
export class PublishError extends httpErrorClass("PublishError", "publish_failed", 503) {}

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
 * parent's, and given the nearest known key when `schema` (the one that raised the issues)
 * has one close enough. `root` names the value itself when the path is empty.
 */
export function zodIssues(
  issues: readonly z.core.$ZodIssue[],
  root = "(input)",
  schema?: z.ZodType,
): Issue[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      const known = schema ? knownKeysAt(schema, issue.path) : [];
      return issue.keys.map((key) => {
        const meant = nearest(key, known);
        return {
          path: [...at, key].join("."),
          message: meant ? `unknown field; did you mean "${meant}"?` : "unknown field",
        };
      });
    }
    return [{ path: at.join(".") || root, message: issue.message }];
  });
}
