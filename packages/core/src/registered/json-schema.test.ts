import { describe, expect, it } from "vitest";
import { compileSchema, SchemaError, schemaIssues } from "./json-schema";

describe("registered JSON Schemas", () => {
  it("name each failing path: required, unknown fields and formats", () => {
    const schema = {
      type: "object",
      properties: {
        email: { type: "string", format: "email" },
        name: { type: "string" },
        nested: { type: "object", properties: { n: { type: "integer" } } },
      },
      required: ["email", "name"],
      additionalProperties: false,
    };
    expect(schemaIssues(schema, { email: "nope", extra: 1, nested: { n: 1.5 } })).toEqual(
      expect.arrayContaining([
        { path: "name", message: "required" },
        { path: "extra", message: "unknown field" },
        { path: "email", message: 'must match format "email"' },
        { path: "nested.n", message: "must be integer" },
      ]),
    );
    expect(schemaIssues(schema, { email: "a@b.example", name: "x" })).toEqual([]);
  });

  it("accept draft-07, as MCP servers built on zod-to-json-schema publish it", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { type: "number", exclusiveMinimum: 0 } },
    };
    expect(schemaIssues(schema, { n: 0 })).toEqual([{ path: "n", message: "must be > 0" }]);
  });

  it("refuse a schema that breaks its meta-schema, an unknown dialect or a dangling $ref", () => {
    expect(() => compileSchema({ type: "objekt" })).toThrow(SchemaError);
    expect(() => compileSchema({ $schema: "http://json-schema.org/draft-04/schema#" })).toThrow(
      /Unsupported \$schema/,
    );
    expect(() => compileSchema({ $ref: "#/$defs/none" })).toThrow(/cannot be compiled/);
  });

  it("let two schemas share one $id without clashing", () => {
    const a = compileSchema({ $id: "https://x.example/s", type: "string" });
    const b = compileSchema({ $id: "https://x.example/s", type: "number" });
    expect([a("x"), b("x")]).toEqual([true, false]);
  });
});
