import { format } from "@cfworker/json-schema";
import { describe, expect, it, vi } from "vitest";
import { compileSchema, SchemaError, schemaIssues } from "./json-schema";
import { MAX_UNIQUE_CHECKED_ITEMS } from "./schema-check";

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

  it("name paths through references, tuples and dependent fields", () => {
    const schema = {
      type: "object",
      $defs: { positive: { type: "number", exclusiveMinimum: 0 } },
      properties: {
        "a/b": { $ref: "#/$defs/positive" },
        pair: { type: "array", prefixItems: [{ type: "string" }], items: false },
      },
      dependentRequired: { from: ["to"] },
    };
    expect(schemaIssues(schema, { "a/b": 0, pair: ["x", 1], from: 1 })).toEqual([
      { path: "to", message: "required when from is present" },
      { path: "a/b", message: "must be > 0" },
      { path: "pair.1", message: "unexpected item" },
    ]);
  });

  it("say which of the alternatives failed, and that none matched", () => {
    const schema = { anyOf: [{ type: "string" }, { type: "number", minimum: 5 }] };
    expect(schemaIssues(schema, 1)).toEqual([
      { path: "(input)", message: "must match a schema in anyOf" },
      { path: "(input)", message: "must be string" },
      { path: "(input)", message: "must be >= 5" },
    ]);
  });

  it("refuse, with the path, patterns that are not regular expressions", () => {
    expect(() => compileSchema({ properties: { a: { pattern: "(" } } })).toThrow(
      'It is not a valid JSON Schema: /properties/a/pattern must match format "regex".',
    );
    expect(() => compileSchema({ patternProperties: { "[": {} } })).toThrow(SchemaError);
  });

  it("refuse $dynamicRef, which would otherwise go unchecked", () => {
    expect(() => compileSchema({ $dynamicRef: "#meta" })).toThrow(/\$dynamicRef is not supported/);
  });

  it("leave the caller's schema as it was", () => {
    const schema = { type: "object", properties: { a: { $ref: "#/$defs/a" } }, $defs: { a: {} } };
    const before = structuredClone(schema);
    compileSchema(schema);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(["$ref"]);
    expect(schema).toEqual(before);
  });

  it("treat a field set to undefined as absent, as JSON would", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect(schemaIssues(schema, { a: undefined })).toEqual([{ path: "a", message: "required" }]);
    expect(schemaIssues(schema, undefined)).toEqual([
      { path: "(input)", message: "must be a JSON value" },
    ]);
  });

  describe("against hostile values and schemas", () => {
    const tree = {
      $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } },
      $ref: "#/$defs/node",
    };

    it("answer an issue, not an exception, for a value nested past the stack", () => {
      let value: unknown = {};
      for (let depth = 0; depth < 10_000; depth++) value = { child: value };
      expect(schemaIssues(tree, value)).toEqual([
        { path: "(input)", message: "is nested too deeply to check" },
      ]);
      expect(compileSchema(tree)(value)).toBe(false);
    });

    it("answer an issue for field names that are not valid Unicode", () => {
      const value = JSON.parse('{"\\ud800": 1}');
      expect(schemaIssues({ type: "object", additionalProperties: false }, value)).toEqual([
        { path: "(input)", message: "has a field name that is not valid Unicode" },
      ]);
    });

    it("refuse arrays too long to check for duplicates, where items must be unique", () => {
      const schema = {
        type: "object",
        properties: { tags: { type: "array", uniqueItems: true } },
      };
      const long = Array.from({ length: MAX_UNIQUE_CHECKED_ITEMS + 1 }, (_, index) => index);
      expect(schemaIssues(schema, { tags: long })).toEqual([
        {
          path: "tags",
          message: `has more than ${MAX_UNIQUE_CHECKED_ITEMS} items, too many to check for duplicates`,
        },
      ]);
      expect(schemaIssues(schema, { tags: long.slice(1) })).toEqual([]);
      expect(schemaIssues({ type: "object" }, { tags: long })).toEqual([]);
    });

    it("refuse a schema nested past the stack with a SchemaError", () => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let depth = 0; depth < 10_000; depth++) {
        schema = { type: "object", properties: { a: schema } };
      }
      expect(() => compileSchema(schema)).toThrow(SchemaError);
    });

    it("check a long string once per format and pattern, however long it is", () => {
      const schema = {
        type: "object",
        properties: {
          email: { type: "string", format: "email" },
          uri: { type: "string", format: "uri" },
          word: { type: "string", pattern: "^[a-z]+$" },
        },
      };
      // What each check is handed, counted at the checks themselves (cfworker's format table
      // and the RegExp its `pattern` builds). A regex's own steps cannot be counted: the bench
      // times these shapes at n and 2n ("registered JSON Schema" in bench/parsers.ts).
      const email = vi.spyOn(format, "email");
      const uri = vi.spyOn(format, "uri");
      const regexTest = vi.spyOn(RegExp.prototype, "test");
      const handed = (length: number) => {
        for (const spy of [email, uri, regexTest]) spy.mockClear();
        const huge = `${"a".repeat(length)}@`;
        expect(schemaIssues(schema, { email: huge, uri: huge, word: huge })).toHaveLength(3);
        const patternCalls = regexTest.mock.calls.filter(
          (_, i) => (regexTest.mock.contexts[i] as RegExp).source === "^[a-z]+$",
        );
        const characters = (calls: unknown[][]) =>
          calls.reduce((sum, [value]) => sum + String(value).length, 0);
        return {
          email: characters(email.mock.calls),
          uri: characters(uri.mock.calls),
          pattern: characters(patternCalls),
        };
      };
      try {
        // One check each, of the whole string: twice the string, twice what is handed over.
        expect(handed(500_000)).toEqual({ email: 500_001, uri: 500_001, pattern: 500_001 });
        expect(handed(1_000_000)).toEqual({
          email: 1_000_001,
          uri: 1_000_001,
          pattern: 1_000_001,
        });
      } finally {
        for (const spy of [email, uri, regexTest]) spy.mockRestore();
      }
    });
  });
});
