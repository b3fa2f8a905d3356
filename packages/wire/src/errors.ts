/**
 * The errors a caller can be answered with: each class names the `code` and HTTP status that the
 * API and the MCP server show, so a code means one thing to the server that raises it and to
 * anything that reads an error body. `context` is for logs and never leaves the process.
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
