import { LocalRuntimeError } from "../errors";

/**
 * An event pattern EventBridge would refuse. The bus answers PutRule and TestEventPattern with
 * AWS's InvalidEventPatternException built from this message, so it reads like AWS's own:
 * `Event pattern is not valid. Reason: <what is wrong> at <path of the field>`.
 */
export class InvalidEventPatternError extends LocalRuntimeError {
  override name = "InvalidEventPatternError";
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
