import { describe } from "./json";

/**
 * The `numeric` operator: ["=", n], or one lower bound (">" / ">=") and/or one upper bound
 * ("<" / "<="), lower first. AWS's matcher parses the list in exactly that order and rejects
 * anything else, so we do too. It only ever matches JSON numbers: "5" is not 5.
 */

export type NumberTest = (value: number) => boolean;

/** AWS documents numeric matching for values between -5e9 and 5e9 and rejects rules outside it. */
export const NUMERIC_LIMIT = 5e9;

const LOWER = new Set([">", ">="]);
const UPPER = new Set(["<", "<="]);

function checkOperand(operator: string, value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    return `value of "${operator}" in "numeric" must be a number, got ${describe(value)}`;
  }
  if (value < -NUMERIC_LIMIT || value > NUMERIC_LIMIT) {
    return `numeric value ${value} is out of range: it must be between -5e9 and 5e9 inclusive`;
  }
  return undefined;
}

/** Compiles the operator's list, calling `fail` (which throws) with the reason it is invalid. */
export function compileNumeric(spec: unknown, fail: (reason: string) => never): NumberTest {
  if (!Array.isArray(spec)) return fail(`"numeric" must be an array, got ${describe(spec)}`);
  if (spec.length === 0) return fail(`"numeric" must not be an empty array`);
  const [first, firstValue] = spec;
  if (typeof first !== "string") {
    return fail(`"numeric" must start with an operator string, got ${describe(first)}`);
  }
  if (first !== "=" && !LOWER.has(first) && !UPPER.has(first)) {
    return fail(`unrecognized numeric operator "${first}"; use one of "=", "<", "<=", ">", ">="`);
  }
  const firstProblem = checkOperand(first, firstValue);
  if (firstProblem) return fail(firstProblem);
  const a = firstValue as number;

  if (first === "=" || UPPER.has(first)) {
    if (spec.length > 2) {
      return fail(
        first === "="
          ? `"=" in "numeric" must be used alone, as ["=", value]`
          : `too many elements in "numeric": an upper bound must come last (put ">" or ">=" first)`,
      );
    }
    if (first === "=") return (n) => n === a;
    return first === "<" ? (n) => n < a : (n) => n <= a;
  }

  if (spec.length === 2) return first === ">" ? (n) => n > a : (n) => n >= a;
  const [, , second, secondValue] = spec;
  if (typeof second !== "string" || !UPPER.has(second)) {
    return fail(
      `a numeric range takes at most one lower bound followed by one upper bound ("<" or "<="), got ${describe(second)}`,
    );
  }
  const secondProblem = checkOperand(second, secondValue);
  if (secondProblem) return fail(secondProblem);
  if (spec.length > 4)
    return fail(`too many elements in "numeric": at most two bounds are allowed`);
  const b = secondValue as number;
  if (!(a < b)) {
    return fail(`numeric range lower bound ${a} must be less than upper bound ${b}`);
  }
  const openLow = first === ">";
  const openHigh = second === "<";
  if (openLow && openHigh) return (n) => n > a && n < b;
  if (openLow) return (n) => n > a && n <= b;
  if (openHigh) return (n) => n >= a && n < b;
  return (n) => n >= a && n <= b;
}
