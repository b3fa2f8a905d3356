import { dereference, type Schema, type SchemaDraft, validate } from "@cfworker/json-schema";
import type { Issue } from "../errors";
import { canonicalJson, sha256Hex } from "../util/canonical-json";
import { DRAFT_07_META, DRAFT_2020_12_META } from "./meta-schemas";
import { type CompiledSchema, compiledCheck } from "./schema-check";
import { type SchemaLookup, type SchemaProblem, schemaProblems } from "./schema-problems";

export type { CompiledSchema } from "./schema-check";

/**
 * Registered tools come with JSON Schemas written by others: MCP servers often publish draft-07
 * (zod-to-json-schema), our own tools 2020-12. They are checked with @cfworker/json-schema,
 * which interprets a schema rather than generating code for it as Ajv does: no compiler in
 * every bundle (~150 KB with Ajv's formats and URI parser) and nothing to generate on a cold
 * start. Unknown keywords and formats are ignored, as real servers add their own.
 */

export class SchemaError extends Error {
  override name = "SchemaError";
}

interface Dialect {
  draft: SchemaDraft;
  meta: Schema;
  metaLookup?: SchemaLookup;
}

const DIALECTS = {
  "2020-12": { draft: "2020-12", meta: DRAFT_2020_12_META } as Dialect,
  "7": { draft: "7", meta: DRAFT_07_META } as Dialect,
};

/** The dialect of the schema's `$schema` (2020-12 when absent, as MCP specifies). */
function dialectOf(schema: Record<string, unknown>): Dialect {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : undefined;
  if (dialect === undefined || /\/draft\/2020-12\/schema#?$/.test(dialect)) {
    return DIALECTS["2020-12"];
  }
  if (/\/draft-07\/schema#?$/.test(dialect)) return DIALECTS["7"];
  throw new SchemaError(
    `Unsupported $schema ${dialect}: use JSON Schema draft 2020-12 (the default) or draft-07.`,
  );
}

const compiled = new Map<string, CompiledSchema>();
const MAX_COMPILED = 500;
/**
 * The same schema object seen again (a catalog entry held in memory) skips hashing its
 * canonical JSON, which costs far more than validating a typical input.
 */
const bySchemaObject = new WeakMap<object, CompiledSchema>();

/**
 * Checks a schema against its dialect's meta-schema and prepares it, once per distinct schema
 * per process. Throws SchemaError with a readable message when the schema itself is broken,
 * so a bad schema is refused at registration rather than failing at call time.
 */
export function compileSchema(schema: Record<string, unknown>): CompiledSchema {
  const seen = bySchemaObject.get(schema);
  if (seen) return seen;
  const json = guarded(() => canonicalJson(schema));
  const key = sha256Hex(json);
  const known = compiled.get(key);
  if (known) {
    bySchemaObject.set(schema, known);
    return known;
  }
  const dialect = dialectOf(schema);
  // A copy of our own, as JSON has it and in the caller's key order (issues come in schema
  // order): cfworker marks the schemas it reads (resolved references), and the caller's
  // object stays as it was.
  const root = JSON.parse(JSON.stringify(schema)) as Schema;
  const broken = guarded(() => metaProblems(root, dialect));
  if (broken.length > 0) {
    throw new SchemaError(`It is not a valid JSON Schema: ${describe(broken)}.`);
  }
  const lookup = guarded(() => resolve(root));
  const check = compiledCheck(root, dialect.draft, lookup, json.includes('"uniqueItems":true'));
  if (compiled.size >= MAX_COMPILED) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(key, check);
  bySchemaObject.set(schema, check);
  return check;
}

/** Every way `value` fails `schema` (at most `limit`), or an empty list. */
export function schemaIssues(schema: Record<string, unknown>, value: unknown, limit = 20): Issue[] {
  return compileSchema(schema).issues(value, limit);
}

function metaProblems(schema: Schema, dialect: Dialect): SchemaProblem[] {
  dialect.metaLookup ??= dereference(dialect.meta);
  const result = validate(schema, dialect.meta, dialect.draft, dialect.metaLookup, false);
  return result.valid ? [] : schemaProblems(result.errors, dialect.meta, dialect.metaLookup, 5);
}

/**
 * Every schema `root` holds, by URI. Each reference must resolve now: cfworker would find out
 * only when a value reached it. `$dynamicRef` it does not follow, so it is refused rather than
 * silently not checked.
 */
function resolve(root: Schema): SchemaLookup {
  let lookup: SchemaLookup;
  try {
    lookup = dereference(root);
  } catch (error) {
    throw new SchemaError(`It cannot be compiled: ${(error as Error).message}`);
  }
  for (const schema of Object.values(lookup)) {
    if (typeof schema !== "object") continue;
    const target = schema.__absolute_ref__ ?? schema.__absolute_recursive_ref__;
    if (target !== undefined && lookup[target] === undefined) {
      const reference = schema.$ref ?? schema.$recursiveRef;
      throw new SchemaError(
        `It cannot be compiled: the reference ${reference} resolves to nothing.`,
      );
    }
    if (schema.$dynamicRef !== undefined) {
      throw new SchemaError("It cannot be compiled: $dynamicRef is not supported; use $ref.");
    }
  }
  return lookup;
}

/** A schema nested past the stack is still the schema's fault. */
function guarded<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof RangeError) throw new SchemaError("It is nested too deeply to check.");
    throw error;
  }
}

function describe(problems: readonly SchemaProblem[]): string {
  return problems
    .map((problem) => {
      const pointer = problem.at
        .map((part) => `/${part.replaceAll("~", "~0").replaceAll("/", "~1")}`)
        .join("");
      return `${pointer || "(root)"} ${problem.message}`;
    })
    .join("; ");
}
