import { existsSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { importCycles } from "../scripts/architecture/cycles";
import {
  declaredDependencies,
  parseModule,
  readSourceGraph,
  type SourceGraph,
} from "../scripts/architecture/imports";
import {
  appLayerViolations,
  cyclesOf,
  describeConstructions,
  describeCycles,
  describeFailedResultBuilders,
  describeLayerViolations,
  duplicateServiceNames,
  failedResultBuilders,
  PACKAGE_LEVELS,
  packageViolations,
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

describe("the workspace packages", () => {
  it("import only packages below them, by name, and only ones their package.json declares", () => {
    const declared = (pkg: string) => declaredDependencies(ROOT, pkg);
    expect(describeLayerViolations(packageViolations(graph, declared))).toEqual([]);
  });

  it("each have a level, and a README saying what they own", () => {
    const packages = readdirSync(resolve(ROOT, "packages")).filter((name) =>
      existsSync(resolve(ROOT, "packages", name, "package.json")),
    );
    expect(packages.filter((name) => PACKAGE_LEVELS[name] === undefined)).toEqual([]);
    expect(
      packages.filter((name) => !existsSync(resolve(ROOT, "packages", name, "README.md"))),
    ).toEqual([]);
  });

  it("are checked for real: an upward, a relative and an undeclared import are each caught", () => {
    const module = (file: string, specifier: string, target: string) => ({
      file,
      lines: 1,
      imports: [{ specifier, target, typeOnly: false, dynamic: false, line: 1 }],
      unresolved: [],
      classes: [],
      constructions: [],
      failedResults: [],
    });
    const fake: SourceGraph = {
      root: ROOT,
      modules: new Map(
        [
          module("packages/core/src/a.ts", "@toolbus/http", "packages/http/src/index.ts"),
          module("packages/http/src/b.ts", "../../core/src/a", "packages/core/src/a.ts"),
          module("packages/harness/src/c.ts", "@toolbus/pattern", "packages/pattern/src/index.ts"),
          module("packages/http/src/d.ts", "@toolbus/core", "packages/core/src/index.ts"),
        ].map((entry) => [entry.file, entry]),
      ),
    };
    const declared = (pkg: string) => new Set(pkg === "http" ? ["@toolbus/core"] : []);
    const rules = packageViolations(fake, declared).map((violation) => violation.file);
    expect(rules).toEqual([
      "packages/core/src/a.ts",
      "packages/http/src/b.ts",
      "packages/harness/src/c.ts",
    ]);
  });
});

describe("the adapters", () => {
  it("do not reach sideways: MCP takes nothing from the REST API", () => {
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
