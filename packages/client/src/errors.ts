/** What the client knows about a failed request; every field but `code` may be absent. */
export interface ToolbusClientErrorOptions {
  /** HTTP status; absent when no response arrived (network failure, bad response body). */
  status?: number;
  details?: unknown;
  /** The API's `x-request-id`, to quote when reporting a problem. */
  requestId?: string;
  /** From `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
  /** Where it happened (method, path): never the key or the body. */
  context?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * Every error the client throws. API errors carry the API's own `code`, `message` and
 * `details` (`{ error: { code, message, details? } }`); failures of the client itself use
 * the codes `network_error` (no response) and `invalid_response` (a body that is not what
 * the API promises).
 */
export class ToolbusClientError extends Error {
  override name = "ToolbusClientError";
  readonly code: string;
  readonly status: number | undefined;
  readonly details: unknown;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly context: Record<string, unknown>;

  constructor(code: string, message: string, options: ToolbusClientErrorOptions = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.details = options.details;
    this.requestId = options.requestId;
    this.retryAfterMs = options.retryAfterMs;
    this.context = options.context ?? {};
  }

  /** Worth repeating later: the service was unavailable, limited or unreachable. */
  get retryable(): boolean {
    return this.status === undefined
      ? this.code === "network_error"
      : this.status === 429 || this.status >= 500;
  }
}
