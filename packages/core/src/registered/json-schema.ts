import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { Issue } from "../errors";
import { canonicalJson, sha256Hex } from "../util/canonical-json";

// ajv-formats is CommonJS: its plugin is the module itself or its `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv | Ajv2020) => void;

/**
 * Registered tools come with JSON Schemas written by others: MCP servers often publish draft-07
 * (zod-to-json-schema), our own tools 2020-12. `strict: false` accepts the annotation keywords
 * real servers add; `allErrors` so a caller sees every problem at once.
 */
function createValidator<T extends Ajv | Ajv2020>(AjvClass: new (options: object) => T): T {
  const ajv = new AjvClass({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  return ajv;
}

let draft07: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

/** The validator for the schema's `$schema` (2020-12 when absent, as MCP specifies). */
function validatorFor(schema: Record<string, unknown>): Ajv | Ajv2020 {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : undefined;
  if (dialect === undefined || /\/draft\/2020-12\/schema#?$/.test(dialect)) {
    draft2020 ??= createValidator(Ajv2020);
    return draft2020;
  }
  if (/\/draft-07\/schema#?$/.test(dialect)) {
    draft07 ??= createValidator(Ajv);
    return draft07;
  }
  throw new SchemaError(
    `Unsupported $schema ${dialect}: use JSON Schema draft 2020-12 (the default) or draft-07.`,
  );
}

export class SchemaError extends Error {
  override name = "SchemaError";
}

const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 500;
/**
 * The same schema object seen again (a catalog entry held in memory) skips hashing its
 * canonical JSON, which costs far more than validating a typical input.
 */
const bySchemaObject = new WeakMap<object, ValidateFunction>();

/**
 * Checks a schema against its dialect's meta-schema and compiles it, once per distinct schema
 * per process. Throws SchemaError with a readable message when the schema itself is broken,
 * so a bad schema is refused at registration rather than failing at call time.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const seen = bySchemaObject.get(schema);
  if (seen) return seen;
  const key = sha256Hex(canonicalJson(schema));
  const known = compiled.get(key);
  if (known) {
    bySchemaObject.set(schema, known);
    return known;
  }
  const ajv = validatorFor(schema);
  if (!ajv.validateSchema(schema)) {
    throw new SchemaError(`It is not a valid JSON Schema: ${describe(ajv.errors ?? [])}.`);
  }
  // Two registrations may reuse one $id: compile each on its own terms.
  if (typeof schema.$id === "string") ajv.removeSchema(schema.$id);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    throw new SchemaError(`It cannot be compiled: ${(error as Error).message}.`);
  }
  if (compiled.size >= MAX_COMPILED) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(key, validate);
  bySchemaObject.set(schema, validate);
  return validate;
}

/** Every way `value` fails `schema` (at most `limit`), or an empty list. */
export function schemaIssues(schema: Record<string, unknown>, value: unknown, limit = 20): Issue[] {
  const validate = compileSchema(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, limit).map(issueOf);
}

/** Ajv's error as a path and a message; an unknown field is named by its own path. */
function issueOf(error: ErrorObject): Issue {
  const at = error.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
  const join = (parts: string[]) => parts.join(".") || "(input)";
  if (error.keyword === "additionalProperties") {
    const key = String((error.params as { additionalProperty?: unknown }).additionalProperty);
    return { path: join([...at, key]), message: "unknown field" };
  }
  if (error.keyword === "required") {
    const key = String((error.params as { missingProperty?: unknown }).missingProperty);
    return { path: join([...at, key]), message: "required" };
  }
  return { path: join(at), message: error.message ?? `fails ${error.keyword}` };
}

function describe(errors: readonly ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((error) => `${error.instancePath || "(root)"} ${error.message ?? error.keyword}`)
    .join("; ");
}
