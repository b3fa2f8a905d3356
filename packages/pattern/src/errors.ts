/**
 * An event pattern EventBridge would refuse. The bus answers PutRule and TestEventPattern with
 * AWS's InvalidEventPatternException built from this message, so it reads like AWS's own:
 * `Event pattern is not valid. Reason: <what is wrong> at <path of the field>`.
 *
 * It extends Error directly: the matcher lives in core so a Lambda can use it, and core cannot
 * depend on the local runtime's error classes.
 */
export class InvalidEventPatternError extends Error {
  override name = "InvalidEventPatternError";
  readonly context: { reason: string; path: string };

  constructor(
    message: string,
    options: { cause?: unknown; context: { reason: string; path: string } },
  ) {
    super(message, { cause: options.cause });
    this.context = options.context;
  }
}

/**
 * Builds the error for one problem. `path` is the dotted field path (with `$or[i]` for a branch),
 * empty for the pattern as a whole; both are also kept in `context` for callers that log them.
 */
export function invalidPattern(
  reason: string,
  path: string,
  cause?: unknown,
): InvalidEventPatternError {
  const where = path === "" ? "" : ` at ${path}`;
  return new InvalidEventPatternError(`Event pattern is not valid. Reason: ${reason}${where}`, {
    cause,
    context: { reason, path },
  });
}
