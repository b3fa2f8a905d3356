/**
 * The dependency rules the source keeps (the bar of issue 35), as checks over the import
 * graph that name each offending file and line. test/architecture.test.ts enforces them;
 * report.ts prints the figures they are measured by.
 */
import { importCycles } from "./cycles";
import { type ImportEdge, type SourceGraph, type SourceModule, targetsOf } from "./imports";

const CORE = "packages/core/src";
const APP = `${CORE}/app/`;

/** A module the application layer must not import, recognised by what an import names. */
interface Forbidden {
  name: string;
  matches(edge: ImportEdge): boolean;
}

const under =
  (dir: string) =>
  (edge: ImportEdge): boolean =>
    edge.target?.startsWith(`${CORE}/${dir}/`) ?? false;

const packageNamed =
  (...names: string[]) =>
  (edge: ImportEdge): boolean =>
    names.some((name) => edge.specifier === name || edge.specifier.startsWith(`${name}/`));

/**
 * What the application layer (packages/core/src/app) may not reach: it decides, and the
 * adapters around it (runtime, REST, MCP, DynamoDB, AWS, sockets) carry the decisions out.
 * Type-only imports count: a type from an adapter ties the app to that adapter all the same.
 */
const APP_FORBIDDEN: readonly Forbidden[] = [
  { name: "tool runtime (runtime/**)", matches: under("runtime") },
  { name: "REST API and MCP server (@toolbus/http)", matches: packageNamed("@toolbus/http") },
  { name: "HTTP framework (hono)", matches: packageNamed("hono", "@hono") },
  { name: "DynamoDB store (store/**)", matches: under("store") },
  // @smithy/* is the AWS SDK's own core; importing it is importing the SDK.
  { name: "AWS SDK (@aws-sdk/*)", matches: packageNamed("@aws-sdk", "@smithy") },
  { name: "sockets (node:net)", matches: packageNamed("node:net", "net") },
];

export interface LayerViolation {
  file: string;
  line: number;
  specifier: string;
  rule: string;
  typeOnly: boolean;
}

/** Every import from the application layer into a module it must not reach. */
export function appLayerViolations(graph: SourceGraph): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const module of graph.modules.values()) {
    if (!module.file.startsWith(APP)) continue;
    for (const edge of module.imports) {
      const rule = APP_FORBIDDEN.find((forbidden) => forbidden.matches(edge));
      if (!rule) continue;
      violations.push({
        file: module.file,
        line: edge.line,
        specifier: edge.specifier,
        rule: rule.name,
        typeOnly: edge.typeOnly,
      });
    }
  }
  return violations;
}

/**
 * Adapters that sit side by side and must not reach into each other: each takes what it
 * shares with another from the layer below (app, model, http), not from its neighbour.
 */
const HTTP = "packages/http/src";
const SIDEWAYS: readonly { from: string; forbidden: Forbidden }[] = [
  {
    from: `${HTTP}/mcp/`,
    forbidden: {
      name: "REST API (http/api/**)",
      matches: (edge) => edge.target?.startsWith(`${HTTP}/api/`) ?? false,
    },
  },
];

/** Every import from one adapter into a neighbour it must not reach. */
export function sidewaysViolations(graph: SourceGraph): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const module of graph.modules.values()) {
    for (const { from, forbidden } of SIDEWAYS) {
      if (!module.file.startsWith(from)) continue;
      for (const edge of module.imports) {
        if (!forbidden.matches(edge)) continue;
        violations.push({
          file: module.file,
          line: edge.line,
          specifier: edge.specifier,
          rule: forbidden.name,
          typeOnly: edge.typeOnly,
        });
      }
    }
  }
  return violations;
}

/** Groups of files that import each other, directly or through others. */
export function cyclesOf(graph: SourceGraph): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, module] of graph.modules) edges.set(file, targetsOf(module));
  return importCycles(edges);
}

export interface ServiceConstructions {
  service: string;
  /** Where the class is declared. */
  declaredIn: string;
  /** Every non-test `new <service>(`, as file:line. */
  sites: string[];
  /** The distinct files those sites are in. */
  files: string[];
}

/**
 * The application's services: every class declared in packages/core/src/app except errors,
 * with where each is constructed outside tests. Matched by class name, which is unique among
 * the app's classes (`duplicateServiceNames` says when it is not).
 */
export function serviceConstructions(graph: SourceGraph): ServiceConstructions[] {
  const services = appServices(graph);
  const found = new Map(
    [...services].map(([service, declaredIn]) => [
      service,
      { service, declaredIn, sites: [] as string[], files: [] as string[] },
    ]),
  );
  for (const module of graph.modules.values()) {
    for (const construction of module.constructions) {
      const entry = found.get(construction.className);
      if (!entry) continue;
      entry.sites.push(`${module.file}:${construction.line}`);
      if (!entry.files.includes(module.file)) entry.files.push(module.file);
    }
  }
  return [...found.values()].sort((a, b) => a.service.localeCompare(b.service));
}

function appServices(graph: SourceGraph): Map<string, string> {
  const services = new Map<string, string>();
  for (const module of appModules(graph)) {
    for (const declared of module.classes) {
      if (isErrorClass(declared.name, declared.extends)) continue;
      if (!services.has(declared.name)) services.set(declared.name, module.file);
    }
  }
  return services;
}

/** App class names declared in more than one file: construction counts would mix them up. */
export function duplicateServiceNames(graph: SourceGraph): string[] {
  const seen = new Map<string, number>();
  for (const module of appModules(graph)) {
    for (const declared of module.classes) {
      if (isErrorClass(declared.name, declared.extends)) continue;
      seen.set(declared.name, (seen.get(declared.name) ?? 0) + 1);
    }
  }
  return [...seen].filter(([, count]) => count > 1).map(([name]) => name);
}

function appModules(graph: SourceGraph): SourceModule[] {
  return [...graph.modules.values()].filter((module) => module.file.startsWith(APP));
}

function isErrorClass(name: string, base: string | undefined): boolean {
  return name.endsWith("Error") || (base?.endsWith("Error") ?? false);
}

/**
 * The client package speaks the API's JSON and builds its own failed answers for agents; the
 * one-builder rule is about the platform's CallResult.
 */
const NOT_CALL_RESULTS = ["packages/client/"];

export interface FailedResultBuilders {
  /** Each module that builds a failed CallResult in place, with the lines that do. */
  modules: { file: string; lines: number[] }[];
}

/** The modules that build a failed call result as an object literal. */
export function failedResultBuilders(graph: SourceGraph): FailedResultBuilders {
  const modules: FailedResultBuilders["modules"] = [];
  for (const module of graph.modules.values()) {
    if (NOT_CALL_RESULTS.some((prefix) => module.file.startsWith(prefix))) continue;
    if (module.failedResults.length > 0) {
      modules.push({ file: module.file, lines: module.failedResults });
    }
  }
  return { modules };
}

/** Relative or workspace imports that name no file: the graph would miss those edges. */
export function unresolvedImports(graph: SourceGraph): string[] {
  return [...graph.modules.values()].flatMap((module) =>
    module.unresolved.map((edge) => `${module.file}:${edge.line} ${edge.specifier}`),
  );
}

/** Files and physical lines of non-test source under a directory. */
export function linesUnder(graph: SourceGraph, dir: string): { files: number; lines: number } {
  let files = 0;
  let lines = 0;
  for (const module of graph.modules.values()) {
    if (!module.file.startsWith(`${dir}/`)) continue;
    files++;
    lines += module.lines;
  }
  return { files, lines };
}

// Readable violations, one string each, for a failing assertion and the report.

export function describeLayerViolations(violations: readonly LayerViolation[]): string[] {
  return violations.map(
    (violation) =>
      `${violation.file}:${violation.line} imports ${violation.typeOnly ? "(types of) " : ""}` +
      `"${violation.specifier}": ${violation.rule}`,
  );
}

export function describeCycles(cycles: readonly string[][]): string[] {
  return cycles.map((cycle) => cycle.join(" <-> "));
}

export function describeConstructions(services: readonly ServiceConstructions[]): string[] {
  return services.map(
    (entry) =>
      `${entry.service} (${entry.declaredIn}) is constructed in ${entry.files.length} files` +
      (entry.sites.length > 0 ? `: ${entry.sites.join(", ")}` : ""),
  );
}

export function describeFailedResultBuilders(builders: FailedResultBuilders): string[] {
  return builders.modules.map((module) => `${module.file}: lines ${module.lines.join(", ")}`);
}

/**
 * The workspace packages from the bottom up: a package imports only packages on a lower
 * level, and only ones its package.json declares. The wire contract and the pattern matcher
 * depend on nothing of ours; the client bundles the wire contract and nothing else, so what
 * it ships never carries the server; the console takes only the wire contract's types (its
 * imports of it are type-only, erased from the bundle).
 */
export const PACKAGE_LEVELS: Readonly<Record<string, number>> = {
  pattern: 0,
  wire: 0,
  console: 1,
  harness: 1,
  client: 1,
  core: 2,
  tools: 3,
  http: 3,
  local: 4,
};

/** Imports between workspace packages that go sideways, upwards or undeclared. */
export function packageViolations(
  graph: SourceGraph,
  declared: (pkg: string) => ReadonlySet<string>,
): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const module of graph.modules.values()) {
    const from = packageOf(module.file);
    if (!from) continue;
    for (const edge of module.imports) {
      const to = edge.target ? packageOf(edge.target) : undefined;
      if (!to || to === from) continue;
      const fromLevel = PACKAGE_LEVELS[from];
      const toLevel = PACKAGE_LEVELS[to];
      let rule: string | undefined;
      if (fromLevel === undefined || toLevel === undefined) {
        rule = `package ${fromLevel === undefined ? from : to} has no level in PACKAGE_LEVELS`;
      } else if (toLevel >= fromLevel) {
        rule = `${from} (level ${fromLevel}) may import only packages below it; ${to} is level ${toLevel}`;
      } else if (!edge.specifier.startsWith("@toolbus/")) {
        rule = `reaches into ${to} by a relative path; import it by its package name`;
      } else if (!declared(from).has(`@toolbus/${to}`)) {
        rule = `${from}'s package.json does not declare @toolbus/${to}`;
      }
      if (rule) {
        violations.push({
          file: module.file,
          line: edge.line,
          specifier: edge.specifier,
          rule,
          typeOnly: edge.typeOnly,
        });
      }
    }
  }
  return violations;
}

/** The workspace package a repository path belongs to (`packages/<name>/...`). */
export function packageOf(file: string): string | undefined {
  return /^packages\/([^/]+)\//.exec(file)?.[1];
}
