import { type CompiledPattern, compilePattern, InvalidEventPatternError } from "@toolbus/pattern";
import { ValidationError } from "../../errors";
import { canonicalJson } from "../../util/canonical-json";

/** The longest pattern, as canonical JSON text (EventBridge allows a rule no more). */
const MAX_PATTERN_CHARS = 4096;

/**
 * An event pattern from a caller (JSON text or an object): compiled, and as canonical JSON
 * text; a 400 naming what is wrong otherwise. Subscriptions and the event stream take patterns
 * by this one rule. Text is measured before it is parsed, so a huge pattern costs nothing.
 */
export function parseEventPattern(
  input: string | Record<string, unknown>,
  what: string,
): { compiled: CompiledPattern; text: string } {
  const tooLong = () =>
    new ValidationError(`The ${what} is too long.`, {
      details: [{ path: "pattern", message: `at most ${MAX_PATTERN_CHARS} characters as JSON` }],
    });
  try {
    if (typeof input === "string" && input.length > MAX_PATTERN_CHARS * 4) throw tooLong();
    const parsed = typeof input === "string" ? JSON.parse(input) : input;
    const compiled = compilePattern(parsed);
    const text = canonicalJson(parsed);
    if (text.length > MAX_PATTERN_CHARS) throw tooLong();
    return { compiled, text };
  } catch (error) {
    if (error instanceof InvalidEventPatternError || error instanceof SyntaxError) {
      throw new ValidationError(`The ${what} is not valid.`, {
        details: [{ path: "pattern", message: error.message }],
      });
    }
    throw error;
  }
}
