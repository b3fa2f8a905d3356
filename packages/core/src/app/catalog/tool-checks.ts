import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import type { Issue } from "../../errors";
import { compileSchema, SchemaError, schemaIssues } from "../../registered/json-schema";
import { availabilityIssues } from "./checks";

/**
 * What a catalog write must agree with before it is stored: a tool nobody can call (a role
 * or mode the stage does not have, a capability it never detects, a schema that is not valid
 * JSON Schema) is refused with a 400 naming each path, instead of being stored and then
 * failing every call. Apart from ./checks: the JSON Schema checks load with the first such
 * write, not with the API.
 */
export interface CatalogFacts {
  config: StageConfig;
  /** Capability names the stage knows (its stored statuses). */
  capabilities?: readonly string[];
  /** The tool `fallback` names, when there is one and it exists. */
  fallback?: ToolSpec;
}

/** Every problem with a tool an administrator writes, each with its path. */
export function toolIssues(spec: ToolSpec, facts: CatalogFacts): Issue[] {
  const issues = availabilityIssues(spec.availability, facts.config);
  if (facts.capabilities !== undefined) {
    const known = new Set(facts.capabilities);
    spec.requires.forEach((name, index) => {
      if (!known.has(name)) {
        issues.push({
          path: `requires.${index}`,
          message: `no capability ${name} on this stage (GET /v1/capabilities lists them)`,
        });
      }
    });
  }
  if (spec.fallback !== undefined) {
    if (spec.fallback === spec.id) {
      issues.push({ path: "fallback", message: "a tool cannot fall back to itself" });
    } else if (!facts.fallback) {
      issues.push({ path: "fallback", message: `no tool ${spec.fallback} in the catalog` });
    }
  }
  const input = schemaProblem(spec.inputSchema);
  if (input) issues.push({ path: "inputSchema", message: input });
  const output = spec.outputSchema && schemaProblem(spec.outputSchema);
  if (output) issues.push({ path: "outputSchema", message: output });
  if (!input) {
    spec.examples.forEach((example, index) => {
      const wrong = schemaIssues(spec.inputSchema, example.input, 1)[0];
      if (wrong) {
        issues.push({
          path: `examples.${index}.input`,
          message: `does not match the input schema: ${wrong.path} ${wrong.message}`,
        });
      }
    });
  }
  return issues;
}

function schemaProblem(schema: Record<string, unknown>): string | undefined {
  try {
    compileSchema(schema);
    return undefined;
  } catch (error) {
    if (error instanceof SchemaError) return error.message;
    // Whatever else checking it runs into: still the schema's fault.
    return "It cannot be compiled.";
  }
}
