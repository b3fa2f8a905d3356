import { isPlainObject, type JsonObject } from "./json";
import type { NumericRange } from "./numeric-ranges";
import type { Scalar } from "./types";
import { wildcardSegments } from "./wildcard";

/**
 * Anchors: conditions on one event field that an event must meet for a pattern to match it,
 * chosen so they can be looked up by the event's value (an exact value, a prefix, a numeric
 * range...) instead of being tested pattern by pattern. A pattern's anchors form a disjunction:
 * any event the pattern matches meets at least one of them, so the index only has to verify
 * the patterns some anchor found, with the compiled pattern, to get exactly its answer.
 *
 * Why one field suffices: sibling fields are ANDed, so whatever one of them requires the whole
 * object requires. A leaf is an OR of its values, so it yields one anchor per value, and none
 * at all if any value can hold without a positive value (`exists: false`). An `$or` yields the
 * union of its branches' anchors, and none if a branch has none. A nested object with anchors
 * cannot hold with its fields absent, so the compiled matcher needs one object (or one element
 * of an array of objects) to match it, and that object's values sit at the anchor's path once
 * the event is flattened as AWS flattens it (arrays of values and of objects both expanded).
 */
export type AnchorCondition =
  | { kind: "exact"; value: Scalar }
  | { kind: "ignore-case"; lowered: string }
  | { kind: "prefix" | "suffix"; text: string }
  // `length` is the pattern text's own length: the matcher lower-cases that slice of the value.
  | { kind: "prefix-ignore-case" | "suffix-ignore-case"; length: number; lowered: string }
  | ({ kind: "range" } & NumericRange)
  | { kind: "any-string" }
  | { kind: "any-value" };

export interface Anchor {
  path: readonly string[];
  condition: AnchorCondition;
}

/** What an anchor is expected to cost: the index answers with its current load there. */
export type AnchorCost = (anchor: Anchor) => number;

interface Choice {
  anchors: Anchor[];
  cost: number;
}

/**
 * The cheapest anchors for a pattern `compilePattern` has already accepted, or undefined when
 * the pattern can match an event through absent fields alone and so has no anchor.
 */
export function chooseAnchors(pattern: JsonObject, cost: AnchorCost): Anchor[] | undefined {
  return objectChoice(pattern, [], cost)?.anchors;
}

function objectChoice(
  pattern: JsonObject,
  path: readonly string[],
  cost: AnchorCost,
): Choice | undefined {
  let best: Choice | undefined;
  const consider = (choice: Choice | undefined) => {
    // Ties go to the later field: patterns usually name the envelope (`source`) first and the
    // selective detail fields after it.
    if (choice !== undefined && (best === undefined || choice.cost <= best.cost)) best = choice;
  };
  for (const key of Object.keys(pattern)) {
    const value = pattern[key];
    if (key === "$or") {
      consider(unionOf((value as JsonObject[]).map((branch) => objectChoice(branch, path, cost))));
    } else if (Array.isArray(value)) {
      consider(leafChoice(value, [...path, key], cost));
    } else if (isPlainObject(value)) {
      consider(objectChoice(value, [...path, key], cost));
    }
  }
  return best;
}

function unionOf(choices: ReadonlyArray<Choice | undefined>): Choice | undefined {
  const anchors: Anchor[] = [];
  let total = 0;
  for (const choice of choices) {
    if (choice === undefined) return undefined;
    anchors.push(...choice.anchors);
    total += choice.cost;
  }
  return { anchors, cost: total };
}

function leafChoice(values: readonly unknown[], path: readonly string[], cost: AnchorCost) {
  const conditions: AnchorCondition[] = [];
  for (const value of values) {
    const condition = valueCondition(value);
    if (condition === undefined) return undefined;
    conditions.push(condition);
  }
  const anyValue = conditions.find((condition) => condition.kind === "any-value");
  // Any present value covers every other value of the leaf.
  if (anyValue !== undefined) return single({ path, condition: anyValue }, cost);
  return unionOf(conditions.map((condition) => single({ path, condition }, cost)));
}

function single(anchor: Anchor, cost: AnchorCost): Choice {
  return { anchors: [anchor], cost: cost(anchor) };
}

/** The anchor of one match value, or undefined for one that holds on an absent field. */
function valueCondition(value: unknown): AnchorCondition | undefined {
  if (!isPlainObject(value)) return { kind: "exact", value: value as Scalar };
  const [operator] = Object.keys(value);
  const operand = value[operator as string];
  switch (operator) {
    case "prefix":
    case "suffix":
      return affixCondition(operator, operand);
    case "equals-ignore-case":
      return { kind: "ignore-case", lowered: (operand as string).toLowerCase() };
    case "wildcard":
      return wildcardCondition(operand as string);
    case "numeric":
      return numericCondition(operand as unknown[]);
    case "exists":
      return operand === true ? { kind: "any-value" } : undefined;
    // anything-but never matches a missing field or an empty array: it needs some value.
    case "anything-but":
      return { kind: "any-value" };
    // Addresses have many spellings (compressed IPv6, mapped IPv4): any string may be one.
    default:
      return { kind: "any-string" };
  }
}

function affixCondition(operator: "prefix" | "suffix", operand: unknown): AnchorCondition {
  if (typeof operand === "string") {
    return operand === "" ? { kind: "any-string" } : { kind: operator, text: operand };
  }
  const text = (operand as JsonObject)["equals-ignore-case"] as string;
  if (text === "") return { kind: "any-string" };
  return {
    kind: operator === "prefix" ? "prefix-ignore-case" : "suffix-ignore-case",
    length: text.length,
    lowered: text.toLowerCase(),
  };
}

function wildcardCondition(pattern: string): AnchorCondition {
  const segments = wildcardSegments(pattern) as string[];
  const first = segments[0] ?? "";
  if (segments.length === 1) return { kind: "exact", value: first };
  const last = segments[segments.length - 1] ?? "";
  if (first === "" && last === "") return { kind: "any-string" };
  return first.length >= last.length
    ? { kind: "prefix", text: first }
    : { kind: "suffix", text: last };
}

function numericCondition(spec: readonly unknown[]): AnchorCondition {
  const [first, a, second, b] = spec as [string, number, string | undefined, number | undefined];
  if (first === "=") return { kind: "exact", value: a };
  if (first === "<" || first === "<=") {
    return {
      kind: "range",
      low: Number.NEGATIVE_INFINITY,
      lowOpen: false,
      high: a,
      highOpen: first === "<",
    };
  }
  return {
    kind: "range",
    low: a,
    lowOpen: first === ">",
    high: b ?? Number.POSITIVE_INFINITY,
    highOpen: second === undefined ? false : second === "<",
  };
}
