/**
 * Base class for every error raised by the local runtime, so callers can tell our failures
 * from anything thrown by the SDK or Node itself.
 */
export class LocalRuntimeError extends Error {
  override name = "LocalRuntimeError";
  readonly context: Record<string, unknown>;

  constructor(
    message: string,
    options: { cause?: unknown; context?: Record<string, unknown> } = {},
  ) {
    super(message, { cause: options.cause });
    this.context = options.context ?? {};
  }
}
