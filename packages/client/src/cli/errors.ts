import { ToolbusClientError } from "../errors.js";

/** The command line itself is wrong (exit code 2): unknown command, bad option, bad JSON. */
export class UsageError extends ToolbusClientError {
  override name = "UsageError";

  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super("usage_error", message, {
      ...(options.hint ? { details: { hint: options.hint } } : {}),
      ...(options.cause !== undefined ? { cause: options.cause } : {}),
    });
  }

  get hint(): string | undefined {
    return (this.details as { hint?: string } | undefined)?.hint;
  }
}

const hints = new WeakMap<Error, string>();

/** Advice for an API error, printed after it (and as `hint` with --json). */
export function withHint<E extends Error>(error: E, hint: string): E {
  hints.set(error, hint);
  return error;
}

export function hintOf(error: Error): string | undefined {
  return hints.get(error);
}
