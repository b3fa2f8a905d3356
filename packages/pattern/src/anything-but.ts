import { invalidPattern } from "./errors";
import { describe, isPlainObject, typeName } from "./json";
import { NUMERIC_LIMIT } from "./numeric";
import type { Budget, ScalarTest } from "./types";
import { compileWildcard } from "./wildcard";

const ANYTHING_BUT_SHAPES =
  `a string, a number, a non-empty array of strings or of numbers, or an object with one of ` +
  `"prefix", "suffix", "equals-ignore-case" or "wildcard"`;

/**
 * anything-but matches any value it does not exclude, whatever its type: excluding "5" lets
 * the number 5 (and null, true, ...) through, as in AWS, where an exclusion only fails values
 * of its own kind. Over an event array it matches if any element is not excluded.
 */
export function anythingButTest(operand: unknown, path: string, budget: Budget): ScalarTest {
  if (typeof operand === "string") return (value) => value !== operand;
  if (typeof operand === "number") {
    checkAnythingButNumber(operand, path);
    return (value) => value !== operand;
  }
  if (Array.isArray(operand)) {
    budget.use(operand.length, path);
    const excluded = anythingButList(operand, path);
    return (value) => !excluded.has(value);
  }
  if (!isPlainObject(operand)) {
    throw invalidPattern(
      `"anything-but" must be ${ANYTHING_BUT_SHAPES}, got ${typeName(operand)}`,
      path,
    );
  }
  const keys = Object.keys(operand);
  if (keys.length !== 1) {
    throw invalidPattern(
      keys.length === 0
        ? `"anything-but" object must name one of "prefix", "suffix", "equals-ignore-case", "wildcard"`
        : `only one key allowed in an "anything-but" object, got ${keys.map((k) => `"${k}"`).join(", ")}`,
      path,
    );
  }
  const inner = keys[0] as string;
  const innerOperand = operand[inner];
  const texts = anythingButStrings(inner, innerOperand, path, budget);
  switch (inner) {
    case "prefix":
      return (value) => typeof value !== "string" || !anyStartsWith(value, texts);
    case "suffix":
      return (value) => typeof value !== "string" || !anyEndsWith(value, texts);
    case "equals-ignore-case": {
      const lowered = new Set(texts.map((text) => text.toLowerCase()));
      return (value) => typeof value !== "string" || !lowered.has(value.toLowerCase());
    }
    default: {
      const tests = texts.map((text) =>
        compileWildcard(text, (reason) => {
          throw invalidPattern(`invalid "wildcard": ${reason}`, path);
        }),
      );
      return (value) => typeof value !== "string" || !anyPasses(value, tests);
    }
  }
}

// Plain loops rather than Array#some: a callback closing over the value would allocate per call.
function anyStartsWith(value: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) {
    if (value.startsWith(prefix)) return true;
  }
  return false;
}

function anyEndsWith(value: string, suffixes: readonly string[]): boolean {
  for (const suffix of suffixes) {
    if (value.endsWith(suffix)) return true;
  }
  return false;
}

function anyPasses(value: string, tests: ReadonlyArray<(value: string) => boolean>): boolean {
  for (const test of tests) {
    if (test(value)) return true;
  }
  return false;
}

function checkAnythingButNumber(value: number, path: string): void {
  if (!Number.isFinite(value) || value < -NUMERIC_LIMIT || value > NUMERIC_LIMIT) {
    throw invalidPattern(
      `"anything-but" number ${value} is out of range: it must be between -5e9 and 5e9 inclusive`,
      path,
    );
  }
}

function anythingButList(list: readonly unknown[], path: string): Set<unknown> {
  if (list.length === 0) throw invalidPattern(`"anything-but" list must not be empty`, path);
  const allStrings = list.every((item) => typeof item === "string");
  const allNumbers = list.every((item) => typeof item === "number");
  if (!allStrings && !allNumbers) {
    const odd = list.findIndex((item) => typeof item !== "string" && typeof item !== "number");
    throw invalidPattern(
      odd < 0
        ? `"anything-but" list must hold only strings or only numbers, not both`
        : `"anything-but" list must hold only strings or only numbers, got ${describe(list[odd])}`,
      path,
    );
  }
  if (allNumbers) for (const item of list) checkAnythingButNumber(item as number, path);
  return new Set<unknown>(list);
}

/** The operand of anything-but's prefix/suffix/equals-ignore-case/wildcard: string or strings. */
function anythingButStrings(
  inner: string,
  operand: unknown,
  path: string,
  budget: Budget,
): string[] {
  if (
    inner !== "prefix" &&
    inner !== "suffix" &&
    inner !== "equals-ignore-case" &&
    inner !== "wildcard"
  ) {
    throw invalidPattern(
      `unsupported "anything-but" pattern "${inner}"; use "prefix", "suffix", "equals-ignore-case" or "wildcard"`,
      path,
    );
  }
  const texts = Array.isArray(operand) ? operand : [operand];
  if (texts.length === 0) {
    throw invalidPattern(`"anything-but" "${inner}" list must not be empty`, path);
  }
  budget.use(texts.length, path);
  for (const text of texts) {
    if (typeof text !== "string") {
      throw invalidPattern(
        `"anything-but" "${inner}" match pattern must be a string, got ${typeName(text)}`,
        path,
      );
    }
    // An empty prefix or suffix would exclude every string: AWS refuses it as a likely mistake.
    if (text === "" && (inner === "prefix" || inner === "suffix")) {
      throw invalidPattern(`"anything-but" "${inner}" must not be an empty string`, path);
    }
  }
  return texts as string[];
}
