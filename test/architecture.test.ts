import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { importCycles } from "../scripts/architecture/cycles";
import { parseModule, readSourceGraph, type SourceGraph } from "../scripts/architecture/imports";
import {
  appLayerViolations,
  cyclesOf,
  describeConstructions,
  describeCycles,
  describeFailedResultBuilders,
  describeLayerViolations,
  duplicateServiceNames,
  failedResultBuilders,
  serviceConstructions,
  sidewaysViolations,
  unresolvedImports,
} from "../scripts/architecture/rules";

// The dependency rules of the source (packages/*/src, functions, stacks; tests excluded),
// read from the files as they are, so a change that breaks one fails here naming its place.
const ROOT = resolve(import.meta.dirname, "..");

let graph: SourceGraph;
beforeAll(() => {
  graph = readSourceGraph(ROOT);
});

describe("the import graph", () => {
  it("resolves every relative and workspace import to a source file", () => {
    // An import the reader cannot follow would hide its edges from the checks below.
    expect(unresolvedImports(graph)).toEqual([]);
  });

  it("has no import cycles anywhere in the source, type-only imports included", () => {
    expect(describeCycles(cyclesOf(graph))).toEqual([]);
  });
});

describe("the adapters", () => {
  it("do not reach sideways: MCP takes nothing from the REST API, the harness nothing from app or MCP", () => {
    expect(describeLayerViolations(sidewaysViolations(graph))).toEqual([]);
  });
});

describe("the application layer (packages/core/src/app)", () => {
  it("imports no runtime, REST, MCP, Hono, DynamoDB store, AWS SDK or node:net module", () => {
    expect(describeLayerViolations(appLayerViolations(graph))).toEqual([]);
  });

  it("names each of its classes once, so constructions can be counted by name", () => {
    expect(duplicateServiceNames(graph)).toEqual([]);
  });

  it("has each service constructed in exactly one non-test file", () => {
    const services = serviceConstructions(graph);
    // The check reads real classes: finding none would pass everything without looking.
    expect(services.map((entry) => entry.service)).toContain("CallService");
    const elsewhere = services.filter((entry) => entry.files.length !== 1);
    expect(describeConstructions(elsewhere)).toEqual([]);
  });
});

describe("failed call results", () => {
  it("are built in one module, which every other place calls", () => {
    const builders = failedResultBuilders(graph);
    // None would mean the shape this check looks for changed, not that the rule holds.
    expect(builders.modules.length, "no module builds a failed CallResult").toBeGreaterThan(0);
    const modules = describeFailedResultBuilders(builders);
    expect(modules, `built in more than one module:\n${modules.join("\n")}`).toHaveLength(1);
  });
});

// The checks above are only as good as the reader under them: these pin what it sees.
describe("the source reader", () => {
  it("sees static, type-only, re-exported and dynamic imports", () => {
    const { imports } = parseModule(
      "a.ts",
      [
        'import { a } from "./a";',
        'import type { B } from "./b";',
        'import { type C } from "./c";',
        'export { d } from "./d";',
        'const e = () => import("./e");',
        'type F = typeof import("./f");',
      ].join("\n"),
    );
    expect(
      imports.map(({ specifier, typeOnly, dynamic }) => [specifier, typeOnly, dynamic]),
    ).toEqual([
      ["./a", false, false],
      ["./b", true, false],
      ["./c", true, false],
      ["./d", false, false],
      ["./e", false, true],
      ["./f", true, false],
    ]);
  });

  it("finds a cycle through three files and leaves a chain alone", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
    ]);
    expect(importCycles(graph)).toEqual([["a", "b", "c"]]);
  });

  it("tells a failed call result from a failed call record", () => {
    const failed = (source: string) => parseModule("x.ts", source).failedResults.length;
    expect(failed('const r = { status: "failed", output: "", failure, resultBytes: 0 };')).toBe(1);
    expect(failed('const r = { status: ok ? "succeeded" : "failed", durationMs: 1 };')).toBe(1);
    expect(failed('const r = { ...made, status: "failed", result };')).toBe(0);
    expect(failed('const r = { status: "succeeded", output: "" };')).toBe(0);
  });
});
