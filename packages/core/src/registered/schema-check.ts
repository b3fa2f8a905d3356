import { type OutputUnit, type Schema, type SchemaDraft, validate } from "@cfworker/json-schema";
import type { Issue } from "../errors";
import { type SchemaLookup, type SchemaProblem, schemaProblems } from "./schema-problems";

/** A schema ready to check values with. */
export interface CompiledSchema {
  /** Whether `value` passes (stops at the first failure). */
  (value: unknown): boolean;
  /** Every way `value` fails (at most `limit`), or an empty list. */
  issues(value: unknown, limit?: number): Issue[];
}

/**
 * cfworker compares every pair of items for `uniqueItems`, even numbers: quadratic, so a
 * request body of 45,000 numbers takes seconds. When a schema asks for unique items anywhere,
 * a value holding a longer array than this is refused instead (5,000 objects: under 1 s).
 */
export const MAX_UNIQUE_CHECKED_ITEMS = 5_000;

type Outcome = { valid: boolean; errors: OutputUnit[] };

/** Checks with `root` (resolved into `lookup`), reporting issues in our terms. */
export function compiledCheck(
  root: Schema,
  draft: SchemaDraft,
  lookup: SchemaLookup,
  usesUniqueItems: boolean,
): CompiledSchema {
  const run = (value: unknown, shortCircuit: boolean) => {
    if (usesUniqueItems) {
      const at = longArrayIn(value, MAX_UNIQUE_CHECKED_ITEMS);
      if (at) {
        const message = `has more than ${MAX_UNIQUE_CHECKED_ITEMS} items, too many to check for duplicates`;
        return [issueOf({ at, message })];
      }
    }
    return checked(value, (json) => validate(json, root, draft, lookup, shortCircuit));
  };
  const check = (value: unknown) => {
    const outcome = run(value, true);
    return !Array.isArray(outcome) && outcome.valid;
  };
  check.issues = (value: unknown, limit = 20): Issue[] => {
    const outcome = run(value, false);
    if (Array.isArray(outcome)) return outcome;
    if (outcome.valid) return [];
    return schemaProblems(outcome.errors, root, lookup, limit).map(issueOf);
  };
  return check;
}

/**
 * Runs a check on a value that came from JSON, or from our own code. Values JSON cannot hold
 * (`undefined`, which Ajv treated as absent, functions, bigints) cfworker refuses to look at:
 * those go through JSON first. Values too deep to check, and field names that are not valid
 * Unicode, are the value's fault: an issue, never an exception.
 */
function checked(value: unknown, run: (value: unknown) => Outcome): Outcome | Issue[] {
  try {
    try {
      return run(value);
    } catch (error) {
      if (!(error instanceof Error && /^Instances of ".*" type/.test(error.message))) throw error;
      const json = asJson(value);
      if (json === undefined) return [{ path: "(input)", message: "must be a JSON value" }];
      return run(JSON.parse(json));
    }
  } catch (error) {
    if (error instanceof RangeError) {
      return [{ path: "(input)", message: "is nested too deeply to check" }];
    }
    if (error instanceof URIError) {
      return [{ path: "(input)", message: "has a field name that is not valid Unicode" }];
    }
    throw error;
  }
}

function asJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // a bigint, a cycle
  }
}

interface Visit {
  value: unknown;
  key?: string;
  parent?: Visit;
}

/** The path of the first array in `value` longer than `max`, walked without recursion. */
function longArrayIn(value: unknown, max: number): string[] | undefined {
  const pending: Visit[] = [{ value }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    const item = visit.value;
    if (item === null || typeof item !== "object") continue;
    if (Array.isArray(item) && item.length > max) return pathTo(visit);
    for (const [key, child] of Object.entries(item)) {
      pending.push({ value: child, key, parent: visit });
    }
  }
  return undefined;
}

function pathTo(visit: Visit): string[] {
  const at: string[] = [];
  for (let step: Visit | undefined = visit; step?.key !== undefined; step = step.parent) {
    at.unshift(step.key);
  }
  return at;
}

function issueOf(problem: SchemaProblem): Issue {
  return { path: problem.at.join(".") || "(input)", message: problem.message };
}
