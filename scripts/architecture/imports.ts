/**
 * The source's import graph, read from the files themselves: every relative and workspace
 * (`@toolbus/*`) import of every non-test source file, type-only and dynamic ones included,
 * resolved to the file it names. Parsing only (no type checking), one pass per file: linear in
 * the source's size, about a second for the whole repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";

export interface ImportEdge {
  /** As written: "./x", "@toolbus/core/api", "hono", "node:net". */
  specifier: string;
  /** The source file it resolves to (repository-relative, `/`-separated); absent for packages. */
  target?: string;
  /** `import type`, `export type`, or only type specifiers: erased when compiled. */
  typeOnly: boolean;
  /** `import("...")`: loaded when first used, not when the importer loads. */
  dynamic: boolean;
  line: number;
}

/** Where a class is constructed with `new`. */
export interface Construction {
  className: string;
  line: number;
}

export interface ClassDeclaration {
  name: string;
  /** The `extends` clause's expression as written, when there is one. */
  extends?: string;
  line: number;
}

export interface SourceModule {
  /** Repository-relative, `/`-separated. */
  file: string;
  lines: number;
  imports: ImportEdge[];
  /** Relative or workspace specifiers that name no file: a sign the graph is incomplete. */
  unresolved: ImportEdge[];
  classes: ClassDeclaration[];
  constructions: Construction[];
  /** Lines of object literals that build a failed call result (see `isFailedResultLiteral`). */
  failedResults: number[];
}

export interface SourceGraph {
  root: string;
  modules: Map<string, SourceModule>;
}

/** Reads and resolves every non-test source file under `root`. */
export function readSourceGraph(root: string): SourceGraph {
  const files = sourceFiles(root);
  const known = new Set(files);
  const workspace = workspacePackages(root);
  const modules = new Map<string, SourceModule>();
  for (const file of files) {
    const parsed = parseModule(file, readFileSync(join(root, file), "utf8"));
    const imports: ImportEdge[] = [];
    const unresolved: ImportEdge[] = [];
    for (const edge of parsed.imports) {
      const target = resolveSpecifier(edge.specifier, file, known, workspace, (path) =>
        existsSync(join(root, path)),
      );
      if (target) imports.push({ ...edge, target });
      else if (target === null) unresolved.push(edge);
      else imports.push(edge);
    }
    modules.set(file, { ...parsed, file, imports, unresolved });
  }
  return { root, modules };
}

/** Non-test TypeScript files under packages/<name>/src, functions and stacks, sorted. */
function sourceFiles(root: string): string[] {
  const packages = join(root, "packages");
  const roots = [
    ...(existsSync(packages) ? readdirSync(packages) : []).map((name) => `packages/${name}/src`),
    "functions",
    "stacks",
  ];
  const found: string[] = [];
  for (const dir of roots) walk(root, dir, found);
  return found.sort();
}

function walk(root: string, dir: string, found: string[]): void {
  const absolute = join(root, dir);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) return;
  for (const entry of readdirSync(absolute, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(root, path, found);
    else if (isSourceFile(entry.name)) found.push(path);
  }
}

function isSourceFile(name: string): boolean {
  return (
    /\.(m?ts|tsx)$/.test(name) && !name.endsWith(".d.ts") && !/\.(test|spec)\.tsx?$/.test(name)
  );
}

type ParsedModule = Omit<SourceModule, "file" | "unresolved">;

/** One walk over a file's syntax tree: its imports, classes, `new`s and failed results. */
export function parseModule(file: string, text: string): ParsedModule {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lineOf = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const parsed: ParsedModule = {
    lines: physicalLines(text),
    imports: [],
    classes: [],
    constructions: [],
    failedResults: [],
  };
  const addImport = (
    specifier: ts.Expression | undefined,
    node: ts.Node,
    typeOnly: boolean,
    dynamic: boolean,
  ) => {
    if (specifier && ts.isStringLiteralLike(specifier)) {
      parsed.imports.push({ specifier: specifier.text, typeOnly, dynamic, line: lineOf(node) });
    }
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      addImport(node.moduleSpecifier, node, isTypeOnlyImport(node), false);
    } else if (ts.isExportDeclaration(node)) {
      addImport(node.moduleSpecifier, node, isTypeOnlyExport(node), false);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference)
    ) {
      addImport(node.moduleReference.expression, node, node.isTypeOnly, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      // `typeof import("./x")` in a type position.
      addImport(node.argument.literal as ts.Expression, node, true, false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      addImport(node.arguments[0], node, false, true);
    } else if (ts.isClassDeclaration(node) && node.name) {
      const heritage = node.heritageClauses?.find(
        (clause) => clause.token === ts.SyntaxKind.ExtendsKeyword,
      );
      const base = heritage?.types[0]?.expression.getText(source);
      parsed.classes.push({
        name: node.name.text,
        ...(base ? { extends: base } : {}),
        line: lineOf(node),
      });
    } else if (ts.isNewExpression(node)) {
      const className = constructedName(node.expression);
      if (className) parsed.constructions.push({ className, line: lineOf(node) });
    } else if (ts.isObjectLiteralExpression(node) && isFailedResultLiteral(node)) {
      parsed.failedResults.push(lineOf(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return parsed;
}

/** As `wc -l` counts them, plus an unterminated last line. */
function physicalLines(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return text.length > 0 && !text.endsWith("\n") ? lines + 1 : lines;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // `import "./x"`: run for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return (
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return (
    clause !== undefined &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every((element) => element.isTypeOnly)
  );
}

/** `new Foo(...)` or `new ns.Foo(...)`: the class's own name. */
function constructedName(expression: ts.Expression): string | undefined {
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression)) return expression.name.text;
  return undefined;
}

/**
 * Fields only a call's result has (model/call.ts's `callResult`); a call record, a client
 * answer or an event filter never sets them next to its own `status`.
 */
const RESULT_ONLY_FIELDS = new Set([
  "output",
  "failure",
  "resultBytes",
  "durationMs",
  "completedAt",
]);

/**
 * A failed call result built in place: an object literal whose `status` is, or may be,
 * "failed" (a literal or a conditional with that branch), beside at least one field only a
 * result has. Recognised by shape rather than by type, so no type checker has to run; a call
 * record (`status: "failed", result`) does not match.
 */
function isFailedResultLiteral(node: ts.ObjectLiteralExpression): boolean {
  let mayFail = false;
  let resultField = false;
  for (const property of node.properties) {
    const name = property.name && ts.isIdentifier(property.name) ? property.name.text : undefined;
    if (name === undefined) continue;
    if (name === "status" && ts.isPropertyAssignment(property)) {
      mayFail = mayBeFailed(property.initializer);
    } else if (RESULT_ONLY_FIELDS.has(name)) {
      resultField = true;
    }
  }
  return mayFail && resultField;
}

function mayBeFailed(expression: ts.Expression): boolean {
  if (ts.isStringLiteralLike(expression)) return expression.text === "failed";
  if (ts.isParenthesizedExpression(expression) || ts.isAsExpression(expression)) {
    return mayBeFailed(expression.expression);
  }
  if (ts.isConditionalExpression(expression)) {
    return mayBeFailed(expression.whenTrue) || mayBeFailed(expression.whenFalse);
  }
  return false;
}

/** A workspace package: where it lives and what its `exports` map names. */
interface WorkspacePackage {
  dir: string;
  exports: Map<string, string>;
}

/** `@toolbus/<name>` packages under `packages/`, with their export maps resolved to files. */
export function workspacePackages(root: string): Map<string, WorkspacePackage> {
  const packages = new Map<string, WorkspacePackage>();
  const base = join(root, "packages");
  if (!existsSync(base)) return packages;
  for (const name of readdirSync(base)) {
    const manifestPath = join(base, name, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
      name?: string;
      exports?: Record<string, unknown> | string;
    };
    if (!manifest.name) continue;
    const dir = `packages/${name}`;
    const exports = new Map<string, string>();
    const entries =
      typeof manifest.exports === "string" ? { ".": manifest.exports } : (manifest.exports ?? {});
    for (const [subpath, target] of Object.entries(entries)) {
      const file = sourceTarget(target);
      if (file) exports.set(subpath, posixJoin(dir, file));
    }
    packages.set(manifest.name, { dir, exports });
  }
  return packages;
}

/** The names a workspace package's package.json lists as dependencies of any kind. */
export function declaredDependencies(root: string, pkg: string): Set<string> {
  const manifestPath = join(root, "packages", pkg, "package.json");
  if (!existsSync(manifestPath)) return new Set();
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, unknown>;
  const names = ["dependencies", "devDependencies", "peerDependencies"].flatMap((field) =>
    Object.keys((manifest[field] as Record<string, string> | undefined) ?? {}),
  );
  return new Set(names);
}

/** The file an export points at for source readers: the `@toolbus/source` condition first. */
function sourceTarget(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (target && typeof target === "object") {
    const conditions = target as Record<string, unknown>;
    for (const condition of ["@toolbus/source", "import", "default"]) {
      const found = sourceTarget(conditions[condition]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The source file a specifier names. `undefined` for a third-party or built-in module (not
 * part of the graph); `null` for a relative or workspace specifier that names no source file.
 */
function resolveSpecifier(
  specifier: string,
  importer: string,
  known: ReadonlySet<string>,
  workspace: ReadonlyMap<string, WorkspacePackage>,
  exists: (path: string) => boolean = () => false,
): string | null | undefined {
  if (specifier.startsWith(".")) {
    const path = posixJoin(posix.dirname(importer), specifier);
    if (isAsset(path)) return undefined;
    // A file outside the source roots (the root's sst.config.ts, say) is not in the graph.
    return withExtension(path, known) ?? (withExtension(path, { has: exists }) ? undefined : null);
  }
  const match = /^(@toolbus\/[^/]+)(\/.*)?$/.exec(specifier);
  if (!match) return undefined;
  const found = workspace.get(match[1] as string);
  if (!found) return null;
  const exported = exportedFile(found.exports, `.${match[2] ?? ""}`);
  if (!exported) return null;
  if (isAsset(exported)) return undefined;
  return withExtension(exported, known);
}

/** The file an export map gives a subpath: an exact key, else a `./dir/*` pattern's. */
export function exportedFile(
  exports: ReadonlyMap<string, string>,
  subpath: string,
): string | undefined {
  const exact = exports.get(subpath);
  if (exact) return exact;
  for (const [key, target] of exports) {
    const star = key.indexOf("*");
    if (star === -1) continue;
    const [head, tail] = [key.slice(0, star), key.slice(star + 1)];
    if (subpath.startsWith(head) && subpath.endsWith(tail) && subpath.length >= key.length - 1) {
      return target.replace("*", subpath.slice(head.length, subpath.length - tail.length));
    }
  }
  return undefined;
}

/** Data files (JSON, for example) are imported but hold no imports of their own. */
function isAsset(path: string): boolean {
  return /\.(json|txt|md)$/.test(path);
}

function withExtension(path: string, known: Pick<ReadonlySet<string>, "has">): string | null {
  const stem = path.replace(/\.(m?js|jsx)$/, "");
  for (const candidate of [
    path,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${path}/index.ts`,
    `${path}/index.tsx`,
  ]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** Joins and normalises repository-relative paths with `/`, whatever the platform. */
function posixJoin(...parts: string[]): string {
  return posix.normalize(posix.join(...parts));
}

/** The file's edges to other source files, once each. */
export function targetsOf(module: SourceModule): string[] {
  return [...new Set(module.imports.flatMap((edge) => (edge.target ? [edge.target] : [])))];
}
