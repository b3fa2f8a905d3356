import { invalidPattern } from "./errors";
import { isPlainObject, type JsonObject, typeName } from "./json";
import { compileLeaf, isOperatorName, RESERVED_FIELD_NAMES } from "./leaf";
import type { Budget, Matcher } from "./types";

/**
 * Compiles an EventBridge event pattern into closures, once, so matching an event is a walk of
 * prebuilt functions with no parsing and (outside the case-insensitive operators) no allocation.
 *
 * Structure, following AWS's matcher (aws/event-ruler, `rulesForJSONEvent`):
 * - sibling fields are ANDed; `$or: [{...}, {...}]` ORs whole sub-patterns and is ANDed with its
 *   siblings; it may appear at any level.
 * - a nested pattern object descends into the event. Where the event holds an array of objects
 *   instead, the pattern is matched against each element and matches if one element does, so two
 *   fields never match from different elements ("array consistency").
 * - one exception: a sub-pattern that is satisfied when its fields are all absent (only
 *   `{"exists": false}` leaves) must hold for every element, because AWS checks absence across
 *   the whole array: {"items": {"sku": [{"exists": false}]}} means no item has a sku.
 * - where the event holds a scalar or nothing, the sub-pattern's fields are all missing.
 */

/** Deeper patterns are refused: real ones nest a handful of levels, and this bounds recursion. */
export const MAX_PATTERN_DEPTH = 32;
/** Fields plus match values in one pattern; AWS caps the pattern text at 4096 characters anyway. */
export const MAX_PATTERN_ELEMENTS = 10_000;

interface CompiledField {
  key: string;
  // Keys like "constructor" resolve through Object.prototype on a plain read: check ownership.
  own: boolean;
  match: Matcher;
}

type ObjectTest = (object: JsonObject) => boolean;

const NO_FIELDS: JsonObject = Object.freeze(Object.create(null) as JsonObject);

function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function createBudget(): Budget {
  let used = 0;
  return {
    use(count, path) {
      used += count;
      if (used > MAX_PATTERN_ELEMENTS) {
        throw invalidPattern(
          `the pattern is too large: it has more than ${MAX_PATTERN_ELEMENTS} fields and match values`,
          path,
        );
      }
    },
  };
}

function compileObject(
  pattern: JsonObject,
  path: string,
  depth: number,
  insideOr: boolean,
  budget: Budget,
): ObjectTest {
  if (depth > MAX_PATTERN_DEPTH) {
    throw invalidPattern(`the pattern nests deeper than ${MAX_PATTERN_DEPTH} levels`, path);
  }
  const keys = Object.keys(pattern);
  if (keys.length === 0) throw invalidPattern("empty objects are not allowed", path);
  budget.use(keys.length, path);

  const fields: CompiledField[] = [];
  let branches: ObjectTest[] | undefined;
  for (const key of keys) {
    const value = pattern[key];
    if (key === "$or") {
      branches = compileOr(value, childPath(path, key), depth, budget);
      continue;
    }
    const fieldPath = childPath(path, key);
    if (insideOr && RESERVED_FIELD_NAMES.has(key)) {
      throw invalidPattern(
        `"${key}" is a reserved keyword and cannot be used as a field name inside "$or"`,
        fieldPath,
      );
    }
    let match: Matcher;
    if (Array.isArray(value)) {
      match = compileLeaf(value, fieldPath, budget);
    } else if (isPlainObject(value)) {
      match = nodeMatcher(compileObject(value, fieldPath, depth + 1, insideOr, budget));
    } else {
      const hint = isOperatorName(key)
        ? `; operators go inside the array of match values, as in "field": [{"${key}": ...}]`
        : "";
      throw invalidPattern(
        `"${key}" must be an object or an array, got ${typeName(value)}${hint}`,
        fieldPath,
      );
    }
    fields.push({ key, own: key in Object.prototype, match });
  }
  return objectTest(fields, branches);
}

function compileOr(value: unknown, path: string, depth: number, budget: Budget): ObjectTest[] {
  if (!Array.isArray(value)) {
    throw invalidPattern(
      `"$or" must be an array of at least two objects, got ${typeName(value)}`,
      path,
    );
  }
  if (value.length < 2) {
    throw invalidPattern(`"$or" must contain at least two objects, got ${value.length}`, path);
  }
  return value.map((branch, index) => {
    const branchPath = `${path}[${index}]`;
    if (!isPlainObject(branch)) {
      throw invalidPattern(
        `each "$or" element must be an object, got ${typeName(branch)}`,
        branchPath,
      );
    }
    return compileObject(branch, branchPath, depth + 1, true, budget);
  });
}

/*
 * The closures below are returned straight from factory functions, never assigned to a named
 * variable or object property first. tsx (esbuild with keepNames) would wrap each such closure in
 * a call that redefines its `name`, and closures altered that way run about half as fast.
 */

/** ANDs the fields, then requires one $or branch, if any, on one event object. */
function objectTest(
  fields: readonly CompiledField[],
  branches: readonly ObjectTest[] | undefined,
): ObjectTest {
  const [first, second] = fields;
  const plain = !fields.some((field) => field.own);
  // Most (sub-)patterns name one or two fields: unrolled, they skip the loop and field records.
  if (plain && branches === undefined && first !== undefined && fields.length <= 2) {
    const { key: key1, match: match1 } = first;
    if (second === undefined) return (object) => match1(object[key1]);
    const { key: key2, match: match2 } = second;
    return (object) => match1(object[key1]) && match2(object[key2]);
  }
  const hasOwn = Object.hasOwn;
  return (object) => {
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] as CompiledField;
      const value = field.own
        ? hasOwn(object, field.key)
          ? object[field.key]
          : undefined
        : object[field.key];
      if (!field.match(value)) return false;
    }
    if (branches === undefined) return true;
    for (let i = 0; i < branches.length; i++) {
      if ((branches[i] as ObjectTest)(object)) return true;
    }
    return false;
  };
}

/** Any object in the (possibly nested) event array passes `test`. */
function someElement(values: readonly unknown[], test: ObjectTest): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value === "object" && value !== null) {
      if (Array.isArray(value) ? someElement(value, test) : test(value as JsonObject)) return true;
    }
  }
  return false;
}

/** Every object in the (possibly nested) event array passes `test`; scalars count as empty. */
function everyElement(values: readonly unknown[], test: ObjectTest): boolean {
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value === "object" && value !== null) {
      if (!(Array.isArray(value) ? everyElement(value, test) : test(value as JsonObject))) {
        return false;
      }
    }
  }
  return true;
}

/** Applies an object test to whatever the event holds where the sub-pattern sits. */
function nodeMatcher(test: ObjectTest): Matcher {
  // Whether the sub-pattern holds with all its fields absent: decided once, here.
  const whenAbsent = test(NO_FIELDS);
  return (value) => {
    if (typeof value !== "object" || value === null) return whenAbsent;
    if (Array.isArray(value)) {
      return whenAbsent ? everyElement(value, test) : someElement(value, test);
    }
    return test(value as JsonObject);
  };
}

/** A pattern compiled for repeated matching. */
export interface CompiledPattern {
  /** True if the event matches; false for anything that is not a JSON object. Never throws on JSON. */
  matches(event: unknown): boolean;
}

/** The pattern as a parsed object; throws InvalidEventPatternError for bad JSON or a non-object. */
export function readPattern(pattern: unknown): JsonObject {
  let value = pattern;
  if (typeof pattern === "string") {
    try {
      value = JSON.parse(pattern);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw invalidPattern(`the pattern is not valid JSON (${detail})`, "", error);
    }
  }
  if (!isPlainObject(value)) {
    throw invalidPattern(`an event pattern must be a JSON object, got ${typeName(value)}`, "");
  }
  return value;
}

/**
 * Validates and compiles a pattern given as JSON text or as an already-parsed value.
 * Throws InvalidEventPatternError, naming the problem and the field path, for anything AWS
 * would reject (and for patterns over our size and depth limits).
 */
export function compilePattern(pattern: string | unknown): CompiledPattern {
  const test = compileObject(readPattern(pattern), "", 0, false, createBudget());
  return Object.freeze({
    matches(event: unknown): boolean {
      if (typeof event !== "object" || event === null || Array.isArray(event)) return false;
      try {
        return test(event as JsonObject);
      } catch (error) {
        // Arrays nested deeper than the call stack (JSON.parse builds them happily) overflow the
        // recursive walk: such an event matches nothing rather than crashing the bus. Anything
        // else would be a bug in this module, so it is not swallowed.
        if (error instanceof RangeError) return false;
        throw error;
      }
    },
  });
}

/** Throws InvalidEventPatternError exactly when compilePattern would. */
export function validatePattern(pattern: string | unknown): void {
  compilePattern(pattern);
}

const MAX_CACHED_PATTERNS = 500;
const compiledByText = new Map<string, CompiledPattern>();

/**
 * Compiles and matches in one call. Patterns given as text are cached (bounded), so calling
 * this in a loop with the same rule does not recompile it each time.
 */
export function matchesPattern(pattern: string | unknown, event: unknown): boolean {
  if (typeof pattern !== "string") return compilePattern(pattern).matches(event);
  let compiled = compiledByText.get(pattern);
  if (compiled === undefined) {
    compiled = compilePattern(pattern);
    if (compiledByText.size >= MAX_CACHED_PATTERNS) compiledByText.clear();
    compiledByText.set(pattern, compiled);
  }
  return compiled.matches(event);
}
