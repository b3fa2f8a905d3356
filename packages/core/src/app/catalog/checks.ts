import type { StageConfig } from "../../config";
import { type Issue, ValidationError } from "../../errors";
import type { ToolsetRegistration } from "../../model/registered";
import type { ToolSpec } from "../../model/tool";
import { compileSchema, SchemaError, schemaIssues } from "../../registered/json-schema";

/**
 * What a catalog write must agree with before it is stored: a tool nobody can call (a role
 * or mode the stage does not have, a capability it never detects, a schema that is not valid
 * JSON Schema) is refused with a 400 naming each path, instead of being stored and then
 * failing every call.
 */
export interface CatalogFacts {
  config: StageConfig;
  /** Capability names the stage knows (its stored statuses). */
  capabilities?: readonly string[];
  /** The tool `fallback` names, when there is one and it exists. */
  fallback?: ToolSpec;
}

/** Roles and modes an availability names must be the stage's own. */
export function availabilityIssues(
  availability: Pick<ToolSpec["availability"], "minRole" | "modes">,
  config: StageConfig,
  at = "availability",
): Issue[] {
  const issues: Issue[] = [];
  const { minRole, modes } = availability;
  if (minRole !== undefined && !config.roles.includes(minRole)) {
    issues.push({
      path: `${at}.minRole`,
      message: `unknown role ${JSON.stringify(minRole)}; one of: ${config.roles.join(", ")}`,
    });
  }
  modes?.forEach((mode, index) => {
    if (!config.modes.available.includes(mode)) {
      issues.push({
        path: `${at}.modes.${index}`,
        message: `unknown mode ${JSON.stringify(mode)}; one of: ${config.modes.available.join(", ")}`,
      });
    }
  });
  return issues;
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
  const output = schemaProblem(spec.outputSchema);
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

/** Throws one ValidationError listing every issue, or returns when there is none. */
export function refuseIssues(what: string, issues: readonly Issue[]): void {
  const [first] = issues;
  if (!first) return;
  throw new ValidationError(`${what} is not valid: ${first.path} ${first.message}.`, {
    details: issues,
  });
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

/** The roles and modes a registration's tools (or an MCP server's defaults) name. */
export function registrationIssues(
  registration: ToolsetRegistration,
  config: StageConfig,
): Issue[] {
  if (registration.kind === "mcp") {
    const { availability } = registration.defaults;
    return availability ? availabilityIssues(availability, config, "defaults.availability") : [];
  }
  return registration.tools.flatMap((tool, index) =>
    availabilityIssues(tool.availability, config, `tools.${index}.availability`),
  );
}
