import { anythingButTest } from "./anything-but";
import { compileCidr } from "./cidr";
import { invalidPattern } from "./errors";
import { describe, isPlainObject, type JsonObject, typeName } from "./json";
import { compileNumeric } from "./numeric";
import type { Budget, Matcher, Scalar, ScalarTest } from "./types";
import { compileWildcard } from "./wildcard";

/**
 * Compiles a leaf of a pattern, the array in `"state": ["running", {"prefix": "stop"}]`, into
 * one closure over the event's value at that field. The elements are ORed.
 *
 * What a leaf sees, following AWS's matcher (which flattens the event into leaf paths):
 * - a missing field, or an object (not a leaf), has no values: only {"exists": false} matches;
 * - a string, number, boolean or null is one value, and {"exists": true} matches it, null included;
 * - an array contributes every scalar inside it, nested arrays flattened and objects skipped; the
 *   leaf matches if any one of them matches, so an empty array counts as a missing field.
 */

const OPERATORS = new Set([
  "prefix",
  "suffix",
  "equals-ignore-case",
  "anything-but",
  "numeric",
  "exists",
  "cidr",
  "wildcard",
]);

/** Names a pattern field may not take inside $or, so `{"$or": [{"prefix": ...}]}` is caught. */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...OPERATORS,
  "exactly",
  "=",
  "<",
  "<=",
  ">",
  ">=",
]);

export function isOperatorName(name: string): boolean {
  return OPERATORS.has(name);
}

interface LeafSpec {
  strings: Set<string>;
  numbers: Set<number>;
  matchTrue: boolean;
  matchFalse: boolean;
  matchNull: boolean;
  stringTests: Array<(value: string) => boolean>;
  numberTests: Array<(value: number) => boolean>;
  // anything-but accepts values of every type that it does not exclude.
  anyTests: ScalarTest[];
  existsTrue: boolean;
  existsFalse: boolean;
}

const NO_LEAF = 0;
const LEAF_SEEN = 1;
const MATCHED = 2;

/** Walks an event array (nested arrays flattened, objects skipped) for a scalar passing `test`. */
function scanArray(values: readonly unknown[], test: ScalarTest, existsTrue: boolean): number {
  let result = NO_LEAF;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value === "object" && value !== null) {
      if (Array.isArray(value)) {
        const inner = scanArray(value, test, existsTrue);
        if (inner === MATCHED) return MATCHED;
        if (inner === LEAF_SEEN) result = LEAF_SEEN;
      }
      continue;
    }
    if (value === undefined) continue;
    if (existsTrue || test(value as Scalar)) return MATCHED;
    result = LEAF_SEEN;
  }
  return result;
}

export function compileLeaf(values: readonly unknown[], path: string, budget: Budget): Matcher {
  if (values.length === 0) throw invalidPattern("empty arrays are not allowed", path);
  budget.use(values.length, path);
  const spec: LeafSpec = {
    strings: new Set(),
    numbers: new Set(),
    matchTrue: false,
    matchFalse: false,
    matchNull: false,
    stringTests: [],
    numberTests: [],
    anyTests: [],
    existsTrue: false,
    existsFalse: false,
  };
  for (const value of values) addMatchValue(spec, value, path, budget);

  const test = scalarTest(spec);
  const { existsTrue, existsFalse } = spec;
  const only = singleString(spec);
  if (only !== undefined) {
    // ["aws.ec2"]: the commonest leaf of all, so it skips the generic test on scalars.
    return (value) =>
      value === only || (Array.isArray(value) && scanArray(value, test, false) === MATCHED);
  }
  return (value) => {
    if (value === undefined) return existsFalse;
    if (typeof value !== "object" || value === null) return existsTrue || test(value as Scalar);
    if (Array.isArray(value)) {
      const found = scanArray(value, test, existsTrue);
      return found === MATCHED || (found === NO_LEAF && existsFalse);
    }
    return existsFalse;
  };
}

/** The string of a leaf that is exactly one string and nothing else, like ["aws.ec2"]. */
function singleString(spec: LeafSpec): string | undefined {
  const plain =
    spec.strings.size === 1 &&
    spec.numbers.size === 0 &&
    !spec.matchTrue &&
    !spec.matchFalse &&
    !spec.matchNull &&
    spec.stringTests.length === 0 &&
    spec.numberTests.length === 0 &&
    spec.anyTests.length === 0 &&
    !spec.existsTrue &&
    !spec.existsFalse;
  return plain ? [...spec.strings][0] : undefined;
}

function addMatchValue(spec: LeafSpec, value: unknown, path: string, budget: Budget): void {
  if (typeof value === "string") {
    spec.strings.add(value);
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalidPattern(`${value} is not a JSON number`, path);
    spec.numbers.add(value);
  } else if (typeof value === "boolean") {
    if (value) spec.matchTrue = true;
    else spec.matchFalse = true;
  } else if (value === null) {
    spec.matchNull = true;
  } else if (isPlainObject(value)) {
    addOperator(spec, value, path, budget);
  } else {
    throw invalidPattern(
      `match values must be strings, numbers, true, false, null or operator objects, got ${describe(value)}`,
      path,
    );
  }
}

function addOperator(spec: LeafSpec, expression: JsonObject, path: string, budget: Budget): void {
  const keys = Object.keys(expression);
  if (keys.length !== 1) {
    throw invalidPattern(
      keys.length === 0
        ? `an empty object is not a match expression; expected an operator such as {"prefix": "..."}`
        : `only one key allowed in a match expression, got ${keys.map((k) => `"${k}"`).join(", ")}`,
      path,
    );
  }
  const operator = keys[0] as string;
  const operand = expression[operator];
  switch (operator) {
    case "prefix":
    case "suffix":
      spec.stringTests.push(affixTest(operator, operand, path));
      return;
    case "equals-ignore-case": {
      const lowered = requireString(operator, operand, path).toLowerCase();
      spec.stringTests.push((value) => value.toLowerCase() === lowered);
      return;
    }
    case "wildcard":
      spec.stringTests.push(wildcardTest(operand, path));
      return;
    case "cidr":
      spec.stringTests.push(
        compileCidr(requireString(operator, operand, path), (reason) => {
          throw invalidPattern(`invalid "cidr": ${reason}`, path);
        }),
      );
      return;
    case "numeric":
      spec.numberTests.push(
        compileNumeric(operand, (reason) => {
          throw invalidPattern(reason, path);
        }),
      );
      return;
    case "exists":
      if (typeof operand !== "boolean") {
        throw invalidPattern(
          `"exists" match pattern must be either true or false, got ${describe(operand)}`,
          path,
        );
      }
      if (operand) spec.existsTrue = true;
      else spec.existsFalse = true;
      return;
    case "anything-but":
      spec.anyTests.push(anythingButTest(operand, path, budget));
      return;
    default:
      throw invalidPattern(
        `unrecognized match type "${operator}"; expected one of ${[...OPERATORS].map((o) => `"${o}"`).join(", ")}`,
        path,
      );
  }
}

function requireString(operator: string, operand: unknown, path: string): string {
  if (typeof operand !== "string") {
    throw invalidPattern(
      `"${operator}" match pattern must be a string, got ${typeName(operand)}`,
      path,
    );
  }
  return operand;
}

/** prefix/suffix take a string, or {"equals-ignore-case": string} to ignore case. */
function affixTest(
  operator: "prefix" | "suffix",
  operand: unknown,
  path: string,
): (value: string) => boolean {
  if (typeof operand === "string") {
    return operator === "prefix"
      ? (value) => value.startsWith(operand)
      : (value) => value.endsWith(operand);
  }
  if (!isPlainObject(operand)) {
    throw invalidPattern(
      `"${operator}" match pattern must be a string or {"equals-ignore-case": string}, got ${typeName(operand)}`,
      path,
    );
  }
  const keys = Object.keys(operand);
  if (keys.length !== 1 || keys[0] !== "equals-ignore-case") {
    throw invalidPattern(
      `unsupported "${operator}" pattern ${describe(operand)}; only {"equals-ignore-case": string} is allowed`,
      path,
    );
  }
  const text = requireString("equals-ignore-case", operand["equals-ignore-case"], path);
  const lowered = text.toLowerCase();
  const length = text.length;
  // Lower-casing only the slice that can match keeps the allocation to the pattern's length.
  return operator === "prefix"
    ? (value) => value.length >= length && value.slice(0, length).toLowerCase() === lowered
    : (value) =>
        value.length >= length && value.slice(value.length - length).toLowerCase() === lowered;
}

function wildcardTest(operand: unknown, path: string): (value: string) => boolean {
  return compileWildcard(requireString("wildcard", operand, path), (reason) => {
    throw invalidPattern(`invalid "wildcard": ${reason}`, path);
  });
}

/** One closure testing a scalar against every exact value and operator of the leaf. */
function scalarTest(spec: LeafSpec): ScalarTest {
  const { strings, numbers, matchTrue, matchFalse, matchNull, stringTests, numberTests, anyTests } =
    spec;
  const others =
    numbers.size +
    stringTests.length +
    numberTests.length +
    (matchTrue ? 1 : 0) +
    (matchFalse ? 1 : 0) +
    (matchNull ? 1 : 0);
  // The overwhelmingly common leaves, ["aws.ec2"], a list of names or one anything-but, get a
  // test without the type dispatch below.
  if (others === 0 && anyTests.length === 0) {
    if (strings.size === 1) {
      const [only] = strings;
      return (value) => value === only;
    }
    return (value) => typeof value === "string" && strings.has(value);
  }
  if (others === 0 && strings.size === 0 && anyTests.length === 1) return anyTests[0] as ScalarTest;
  return (value) => {
    switch (typeof value) {
      case "string":
        if (strings.has(value)) return true;
        for (let i = 0; i < stringTests.length; i++) {
          if ((stringTests[i] as (value: string) => boolean)(value)) return true;
        }
        break;
      case "number":
        if (numbers.has(value)) return true;
        for (let i = 0; i < numberTests.length; i++) {
          if ((numberTests[i] as (value: number) => boolean)(value)) return true;
        }
        break;
      case "boolean":
        if (value ? matchTrue : matchFalse) return true;
        break;
      default:
        if (value === null && matchNull) return true;
    }
    for (let i = 0; i < anyTests.length; i++) {
      if ((anyTests[i] as ScalarTest)(value)) return true;
    }
    return false;
  };
}
