import type { OutputUnit, Schema } from "@cfworker/json-schema";

/** Where a value fails (its path, one part per level) and why, in words. */
export interface SchemaProblem {
  at: string[];
  message: string;
}

export type SchemaLookup = Record<string, Schema | boolean>;

/**
 * @cfworker/json-schema reports a failing leaf (`type`, `format`, …) together with one entry
 * for every schema above it that failed because of it ("Property "x" does not match
 * schema."). Those repeat the leaf's failure without saying anything new, so they are left
 * out, as Ajv left them out.
 */
const CONTAINERS = new Set([
  "$ref",
  "$recursiveRef",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "allOf",
  "dependentSchemas",
  "propertyNames",
]);

const EXTRA_FIELD = new Set(["additionalProperties", "unevaluatedProperties"]);
const EXTRA_ITEM = new Set(["items", "prefixItems", "additionalItems", "unevaluatedItems"]);

/**
 * The failures in `errors` (at most `limit`) as paths and messages worded as Ajv worded them
 * (our callers and their tests read these): an unknown field and a missing one are named by
 * their own path, with "unknown field" and "required".
 */
export function schemaProblems(
  errors: readonly OutputUnit[],
  root: Schema | boolean,
  lookup: SchemaLookup,
  limit: number,
): SchemaProblem[] {
  // Items that fail `contains` are not problems in themselves: too few matching is.
  const containsAt = errors
    .filter((error) => error.keyword === "contains" || error.keyword === "minContains")
    .map((error) => `${parentOf(error.keywordLocation)}/contains/`);
  // What fails under `propertyNames` is a field's name, not its value.
  const namesAt = errors
    .filter((error) => error.keyword === "propertyNames")
    .map((error) => `${error.keywordLocation}/`);
  const problems: SchemaProblem[] = [];
  for (const [index, error] of errors.entries()) {
    if (problems.length >= limit) break;
    const location = error.keywordLocation;
    if (containsAt.some((prefix) => location.startsWith(prefix))) continue;
    if (CONTAINERS.has(error.keyword)) continue;
    if (error.keyword === "dependencies" && error.error.endsWith("dependant schema.")) continue;
    const at = pathOf(error.instanceLocation);
    if (error.keyword === "false") {
      problems.push({ at, message: falseMessage(errors[index - 1]?.keyword) });
      continue;
    }
    const problem = leafProblem(error, at, root, lookup);
    if (namesAt.some((prefix) => location.startsWith(prefix))) {
      problem.message = `field name ${problem.message}`;
    }
    problems.push(problem);
  }
  return problems;
}

/** A `false` schema fails whatever reaches it: what that means depends on what led there. */
function falseMessage(parent: string | undefined): string {
  if (parent && EXTRA_FIELD.has(parent)) return "unknown field";
  if (parent && EXTRA_ITEM.has(parent)) return "unexpected item";
  if (parent === "propertyNames") return "field name not allowed";
  return "not allowed";
}

function leafProblem(
  error: OutputUnit,
  at: string[],
  root: Schema | boolean,
  lookup: SchemaLookup,
): SchemaProblem {
  const { keyword } = error;
  if (keyword === "required") {
    const key = quoted(error.error, /^Instance does not have required property "(.*)"\.$/s);
    if (key !== undefined) return { at: [...at, key], message: "required" };
  }
  if (keyword === "dependentRequired" || keyword === "dependencies") {
    const match = /^Instance has "(.*)" but does not have "(.*)"\.$/s.exec(error.error);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      return { at: [...at, match[2]], message: `required when ${match[1]} is present` };
    }
  }
  const value = keywordValue(root, lookup, error.keywordLocation);
  const message = MESSAGES[keyword]?.(value, error.error);
  return { at, message: message ?? lowerFirst(error.error.replace(/\.$/, "")) };
}

const MESSAGES: Record<string, (value: unknown, text: string) => string | undefined> = {
  type: (value) =>
    value === undefined ? undefined : `must be ${[value].flat().map(String).join(",")}`,
  format: (value) => `must match format "${String(value)}"`,
  pattern: (value) => `must match pattern "${String(value)}"`,
  minimum: (value) => `must be >= ${String(value)}`,
  maximum: (value) => `must be <= ${String(value)}`,
  exclusiveMinimum: (value) => `must be > ${String(value)}`,
  exclusiveMaximum: (value) => `must be < ${String(value)}`,
  multipleOf: (value) => `must be multiple of ${String(value)}`,
  minLength: (value) => `must NOT have fewer than ${String(value)} characters`,
  maxLength: (value) => `must NOT have more than ${String(value)} characters`,
  minItems: (value) => `must NOT have fewer than ${String(value)} items`,
  maxItems: (value) => `must NOT have more than ${String(value)} items`,
  minProperties: (value) => `must NOT have fewer than ${String(value)} properties`,
  maxProperties: (value) => `must NOT have more than ${String(value)} properties`,
  uniqueItems: (_value, text) => {
    const match = /indexes (\d+) and (\d+)/.exec(text);
    return match
      ? `must NOT have duplicate items (items ## ${match[2]} and ${match[1]} are identical)`
      : "must NOT have duplicate items";
  },
  enum: () => "must be equal to one of the allowed values",
  const: () => "must be equal to constant",
  not: () => "must NOT be valid",
  anyOf: () => "must match a schema in anyOf",
  oneOf: () => "must match exactly one schema in oneOf",
  if: (_value, text) => `must match "${text.includes('"else"') ? "else" : "then"}" schema`,
  contains: () => "must contain at least 1 valid item(s)",
  minContains: (value) => `must contain at least ${String(value)} valid item(s)`,
  maxContains: (value) => `must contain at most ${String(value)} valid item(s)`,
};

/**
 * The value of the keyword at `location`, an evaluation path (`#/properties/a/$ref/type`):
 * it runs through `$ref`s, so it is followed one step at a time through the lookup.
 */
function keywordValue(root: Schema | boolean, lookup: SchemaLookup, location: string): unknown {
  let node: unknown = root;
  for (const part of pathOf(location)) {
    if (node === null || typeof node !== "object") return undefined;
    const schema = node as Schema;
    if (part === "$ref" && schema.__absolute_ref__ !== undefined) {
      node = lookup[schema.__absolute_ref__];
    } else if (part === "$recursiveRef" && schema.__absolute_recursive_ref__ !== undefined) {
      node = lookup[schema.__absolute_recursive_ref__];
    } else {
      node = Object.hasOwn(schema, part) ? (schema as Record<string, unknown>)[part] : undefined;
    }
  }
  return node;
}

/** `#/a/b~1c/%25` as its parts: `["a", "b/c", "%"]` (cfworker encodes them as URI text). */
function pathOf(location: string): string[] {
  const pointer = location.startsWith("#") ? location.slice(1) : location;
  if (pointer === "") return [];
  return pointer
    .split("/")
    .slice(1)
    .map((part) => unescapePart(decodePart(part)));
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

const unescapePart = (part: string) => part.replaceAll("~1", "/").replaceAll("~0", "~");

function parentOf(location: string): string {
  return location.slice(0, location.lastIndexOf("/"));
}

function quoted(text: string, pattern: RegExp): string | undefined {
  return pattern.exec(text)?.[1];
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
