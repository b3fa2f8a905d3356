import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { busRules, toolSpecOf } from "@toolbus/core";
import { builtinCapabilities, builtinTools } from "@toolbus/tools";
import { describe, expect, it } from "vitest";

const FUNCTIONS = join(import.meta.dirname, "../functions");

describe("the built-in catalog and its wiring", () => {
  it("has a handler in functions/tools for every tool, and a tool for every handler", async () => {
    const files = (await readdir(join(FUNCTIONS, "tools"))).filter((f) => f.endsWith(".ts"));
    const handlers = files.map((f) => f.replace(/\.ts$/, "")).sort();
    expect(handlers).toEqual(builtinTools.map((t) => t.spec.id).sort());
  });

  it("routes every rule of the wiring table to a module that exports a handler", async () => {
    for (const rule of busRules(builtinTools.map((t) => t.spec.id))) {
      const module = await import(pathToFileURL(join(FUNCTIONS, `${rule.handler}.ts`)).href);
      expect(typeof module.handler, rule.handler).toBe("function");
    }
  });

  it("has a detector for every capability a tool requires", () => {
    const detected = new Set(builtinCapabilities.map((d) => d.name));
    for (const tool of builtinTools) {
      for (const name of toolSpecOf(tool).requires)
        expect(detected, `${tool.spec.id}`).toContain(name);
    }
  });

  it("names only built-in tools as fallbacks, and every example fits its tool's input", () => {
    const ids = new Set(builtinTools.map((t) => t.spec.id));
    for (const tool of builtinTools) {
      const spec = toolSpecOf(tool);
      if (spec.fallback) expect(ids).toContain(spec.fallback);
      expect(spec.examples.length, spec.id).toBeGreaterThanOrEqual(1);
      for (const example of spec.examples) {
        expect(tool.input.safeParse(example.input).success, `${spec.id}: ${example.title}`).toBe(
          true,
        );
      }
    }
  });
});
