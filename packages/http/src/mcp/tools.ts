import type { Tool } from "@modelcontextprotocol/server";
import { taskSupportOf } from "@toolbus/core/app/calls/tasks";
import type { ToolSpec } from "@toolbus/wire/model/tool";

type JsonSchema = Record<string, unknown>;

/** A schema MCP accepts: a JSON object at the top (`type: "object"`). */
export interface McpSchema {
  schema: JsonSchema & { type: "object" };
  /**
   * True when the tool's own schema does not describe an object, so it sits under one
   * property (`input` for arguments, `result` for structured content).
   */
  wrapped: boolean;
}

/** The property a non-object input schema is put under; arguments are unwrapped from it. */
export const INPUT_PROPERTY = "input";
/** The property a non-object output schema, and the matching data, are put under. */
export const OUTPUT_PROPERTY = "result";

// Keywords that only mean something at a schema's root: a wrapper keeps them there so
// `$ref: "#/$defs/..."` inside the wrapped schema still resolves.
const ROOT_KEYWORDS = ["$schema", "$id", "$defs", "definitions"] as const;

/**
 * A tool as `tools/list` shows it. The description carries the usage hint too, because most
 * MCP hosts show a model nothing else about when to reach for a tool. With `tasks` (2025-11-25,
 * whose tasks read `execution.taskSupport`; the 2026-07-28 Tool has no `execution`) it says
 * whether the tool may, must or may not be called as a task.
 */
export function toMcpTool(spec: ToolSpec, options: { tasks?: boolean } = {}): Tool {
  const outputSchema = mcpOutputSchema(spec);
  return {
    name: spec.id,
    title: spec.title,
    description: `${spec.description}\n\nWhen to use: ${spec.usageHint}`,
    inputSchema: mcpInputSchema(spec.inputSchema).schema,
    ...(outputSchema ? { outputSchema: outputSchema.schema } : {}),
    annotations: {
      title: spec.title,
      readOnlyHint: spec.annotations.readOnly,
      openWorldHint: spec.annotations.openWorld,
      idempotentHint: spec.annotations.idempotent,
    },
    ...(options.tasks ? { execution: { taskSupport: taskSupportOf(spec) } } : {}),
  };
}

/**
 * MCP arguments are always a JSON object. A schema that admits objects gets `type: "object"`
 * at the top (for `oneOf` of objects this changes nothing it accepts); one that cannot
 * describe an object is wrapped under `input`.
 */
export function mcpInputSchema(schema: JsonSchema): McpSchema {
  if (admitsObject(schema)) return { schema: { ...schema, type: "object" }, wrapped: false };
  return { schema: wrap(schema, INPUT_PROPERTY), wrapped: true };
}

/**
 * The output schema `tools/list` declares, or undefined when there is none to declare: a tool
 * with a fallback may answer in its fallback's shape, and MCP clients reject structured
 * content that does not match the declared schema. A schema that only describes objects is
 * kept (with `type: "object"` made explicit); anything else is wrapped under `result`.
 */
export function mcpOutputSchema(spec: ToolSpec): McpSchema | undefined {
  const schema = spec.outputSchema;
  if (spec.fallback || !schema) return undefined;
  if (onlyObjects(schema)) return { schema: { ...schema, type: "object" }, wrapped: false };
  return { schema: wrap(schema, OUTPUT_PROPERTY), wrapped: true };
}

/** The tool's input from MCP arguments: unwrapped when its input schema had to be wrapped. */
export function toolInput(spec: ToolSpec, args: Record<string, unknown> | undefined): unknown {
  const given = args ?? {};
  return mcpInputSchema(spec.inputSchema).wrapped ? given[INPUT_PROPERTY] : given;
}

/**
 * `structuredContent` for a finished call's data, in the shape `tools/list` declared. Without
 * a declared schema only an object is passed on (MCP requires an object).
 */
export function structuredContentOf(
  spec: ToolSpec,
  data: unknown,
): Record<string, unknown> | undefined {
  if (mcpOutputSchema(spec)?.wrapped) return { [OUTPUT_PROPERTY]: data ?? null };
  return isPlainObject(data) ? data : undefined;
}

function wrap(schema: JsonSchema, property: string): JsonSchema & { type: "object" } {
  const inner: JsonSchema = { ...schema };
  const root: JsonSchema = {};
  for (const keyword of ROOT_KEYWORDS) {
    if (keyword in inner) {
      root[keyword] = inner[keyword];
      delete inner[keyword];
    }
  }
  return {
    ...root,
    type: "object",
    properties: { [property]: inner },
    required: [property],
    additionalProperties: false,
  };
}

/** Could some JSON object be valid against this schema? Conservative: true when unsure. */
function admitsObject(schema: unknown): boolean {
  if (schema === false) return false;
  if (!isPlainObject(schema)) return true;
  const { type } = schema;
  if (typeof type === "string" && type !== "object") return false;
  if (Array.isArray(type) && !type.includes("object")) return false;
  if ("const" in schema && !isPlainObject(schema.const)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some(isPlainObject)) return false;
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && !branches.some(admitsObject)) return false;
  }
  const all = schema.allOf;
  if (Array.isArray(all) && !all.every(admitsObject)) return false;
  return true;
}

/** Is every value this schema accepts a JSON object? Conservative: false when unsure. */
function onlyObjects(schema: unknown): boolean {
  if (!isPlainObject(schema)) return false;
  const { type } = schema;
  if (type === "object") return true;
  if (Array.isArray(type)) return type.length > 0 && type.every((t) => t === "object");
  if (type !== undefined) return false;
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && branches.length > 0 && branches.every(onlyObjects)) return true;
  }
  const all = schema.allOf;
  return Array.isArray(all) && all.some(onlyObjects);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
