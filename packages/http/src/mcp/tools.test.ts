import { ToolSchema } from "@modelcontextprotocol/sdk/types.js";
import { type ToolSpec, type ToolSpecInput, toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import {
  mcpInputSchema,
  mcpOutputSchema,
  structuredContentOf,
  toMcpTool,
  toolInput,
} from "./tools";

const DIALECT = "https://json-schema.org/draft/2020-12/schema";

function tool(overrides: Partial<ToolSpecInput> = {}): ToolSpec {
  return toolSpec.parse({
    id: "word_count",
    toolset: "fixture",
    title: "Word count",
    description: "Counts the words in a text.",
    category: "enhance",
    usageHint: "When the length of a text matters.",
    inputSchema: {
      $schema: DIALECT,
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
      additionalProperties: false,
    },
    outputSchema: {
      $schema: DIALECT,
      type: "object",
      properties: { words: { type: "integer" } },
      required: ["words"],
    },
    ...overrides,
  });
}

const objectA = { type: "object", properties: { action: { const: "a" } }, required: ["action"] };
const objectB = { type: "object", properties: { action: { const: "b" } }, required: ["action"] };

describe("a tool as tools/list shows it", () => {
  it("carries the id, title, description with usage hint, stored schemas and annotations", () => {
    const spec = tool({ annotations: { readOnly: false, openWorld: true, idempotent: false } });
    expect(toMcpTool(spec)).toEqual({
      name: "word_count",
      title: "Word count",
      description: "Counts the words in a text.\n\nWhen to use: When the length of a text matters.",
      inputSchema: spec.inputSchema,
      outputSchema: spec.outputSchema,
      annotations: {
        title: "Word count",
        readOnlyHint: false,
        openWorldHint: true,
        idempotentHint: false,
      },
    });
  });

  it("passes the SDK's own Tool schema, also for schemas that needed adjusting", () => {
    for (const spec of [
      tool(),
      tool({ inputSchema: { oneOf: [objectA, objectB] }, outputSchema: { type: "array" } }),
      tool({ inputSchema: { type: "string" }, outputSchema: { anyOf: [{ type: "string" }] } }),
      tool({ inputSchema: {}, outputSchema: {} }),
    ]) {
      expect(ToolSchema.safeParse(toMcpTool(spec)).success).toBe(true);
    }
  });

  it("declares no output schema for a tool with a fallback, which may answer in another shape", () => {
    const spec = tool({ fallback: "static_links" });
    expect(toMcpTool(spec)).not.toHaveProperty("outputSchema");
    expect(structuredContentOf(spec, { links: [] })).toEqual({ links: [] });
    expect(structuredContentOf(spec, ["not", "an", "object"])).toBeUndefined();
  });
});

describe("input schemas", () => {
  it("keeps an object schema as it is", () => {
    const schema = tool().inputSchema;
    expect(mcpInputSchema(schema)).toEqual({ schema, wrapped: false });
  });

  it("adds type object to a oneOf of objects, keeping the branches", () => {
    const schema = { $schema: DIALECT, oneOf: [objectA, objectB] };
    expect(mcpInputSchema(schema)).toEqual({
      schema: { $schema: DIALECT, oneOf: [objectA, objectB], type: "object" },
      wrapped: false,
    });
  });

  it("narrows a schema that admits objects among other things to objects", () => {
    expect(mcpInputSchema({}).schema).toEqual({ type: "object" });
    expect(mcpInputSchema({ type: ["object", "null"] }).schema).toEqual({ type: "object" });
    expect(mcpInputSchema({ anyOf: [{ type: "string" }, objectA] })).toMatchObject({
      wrapped: false,
      schema: { type: "object" },
    });
  });

  it("wraps a schema no object satisfies under `input`, keeping root keywords at the root", () => {
    const schema = {
      $schema: DIALECT,
      $defs: { word: { type: "string" } },
      type: "array",
      items: { $ref: "#/$defs/word" },
    };
    expect(mcpInputSchema(schema)).toEqual({
      wrapped: true,
      schema: {
        $schema: DIALECT,
        $defs: { word: { type: "string" } },
        type: "object",
        properties: { input: { type: "array", items: { $ref: "#/$defs/word" } } },
        required: ["input"],
        additionalProperties: false,
      },
    });
    for (const never of [
      { type: "string" },
      { oneOf: [{ type: "string" }, { type: "number" }] },
      { allOf: [objectA, { type: "string" }] },
      { enum: ["a", "b"] },
      { const: 3 },
    ]) {
      expect(mcpInputSchema(never).wrapped).toBe(true);
    }
  });

  it("hands the tool its arguments, unwrapped when its schema was wrapped", () => {
    expect(toolInput(tool(), { text: "hi" })).toEqual({ text: "hi" });
    expect(toolInput(tool(), undefined)).toEqual({});
    const wrapped = tool({ inputSchema: { type: "array" } });
    expect(toolInput(wrapped, { input: ["a"] })).toEqual(["a"]);
    expect(toolInput(wrapped, {})).toBeUndefined();
  });
});

describe("output schemas and structured content", () => {
  it("keeps an object schema, and passes object data on as structured content", () => {
    const spec = tool();
    expect(mcpOutputSchema(spec)).toEqual({ schema: spec.outputSchema, wrapped: false });
    expect(structuredContentOf(spec, { words: 3 })).toEqual({ words: 3 });
  });

  it("makes type object explicit on a oneOf or allOf of objects", () => {
    const oneOf = tool({ outputSchema: { oneOf: [objectA, objectB] } });
    expect(mcpOutputSchema(oneOf)).toEqual({
      schema: { oneOf: [objectA, objectB], type: "object" },
      wrapped: false,
    });
    const allOf = tool({ outputSchema: { allOf: [objectA, { required: ["x"] }] } });
    expect(mcpOutputSchema(allOf)?.wrapped).toBe(false);
  });

  it("wraps a schema that admits non-objects under `result`, and the data with it", () => {
    for (const outputSchema of [
      { type: "array", items: { type: "string" } },
      { type: ["object", "null"] },
      { anyOf: [objectA, { type: "string" }] },
      {},
    ]) {
      const spec = tool({ outputSchema });
      const mapped = mcpOutputSchema(spec);
      expect(mapped?.wrapped).toBe(true);
      expect(mapped?.schema).toMatchObject({
        type: "object",
        properties: { result: expect.any(Object) },
        required: ["result"],
      });
    }
    const list = tool({ outputSchema: { $schema: DIALECT, type: "array" } });
    expect(mcpOutputSchema(list)?.schema).toEqual({
      $schema: DIALECT,
      type: "object",
      properties: { result: { type: "array" } },
      required: ["result"],
      additionalProperties: false,
    });
    expect(structuredContentOf(list, ["a", "b"])).toEqual({ result: ["a", "b"] });
    expect(structuredContentOf(list, undefined)).toEqual({ result: null });
  });

  it("gives no structured content for data that is not an object under an object schema", () => {
    expect(structuredContentOf(tool(), "three words")).toBeUndefined();
    expect(structuredContentOf(tool(), null)).toBeUndefined();
  });
});
