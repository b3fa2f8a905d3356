// Builds the package as it is published: ESM JavaScript for node (esbuild) and declarations
// (the TypeScript compiler). What the client takes from the workspace is bundled into the
// JavaScript (@toolbus/wire's zod schemas: the API's contract, which the client parses its
// answers with) or generated into src/generated (types, from @toolbus/wire, @toolbus/harness
// and @toolbus/tools), so the tarball depends only on published packages; the build fails if
// any other import is left in its output.
import { readFile, rm } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import ts from "typescript";
import { GENERATED, generateCatalogTypes, readGenerated } from "./generate-types";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

/** Output name (under dist/) -> source. `cli/main` is what the bin runs; the rest are exports. */
const ENTRIES: Record<string, string> = {
  index: "src/index.ts",
  cli: "src/cli/index.ts",
  "cli/main": "src/cli/main.ts",
  ai: "src/adapters/ai.ts",
  openai: "src/adapters/openai.ts",
  langchain: "src/adapters/langchain.ts",
};

// What the output may import: node's own modules, the dependencies and peer dependencies,
// and the package itself (an adapter imports the client by name, so both share one class).
const allowed = [
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
  manifest.name,
];

function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

function isAllowed(specifier: string): boolean {
  if (specifier.startsWith(".")) return true;
  if (specifier.startsWith("node:") || builtinModules.includes(specifier)) return true;
  return allowed.includes(packageOf(specifier));
}

// The generated types are source, committed and checked by a test: the build refuses stale
// ones rather than writing them (a build during the tests would otherwise mend the file the
// staleness test reads, and that test could never fail).
if ((await readGenerated()) !== generateCatalogTypes()) {
  throw new Error(
    `${relative(root, GENERATED)} is stale: run \`npm run generate -w @toolbus/client\` first.`,
  );
}
await rm(dist, { recursive: true, force: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(
    Object.entries(ENTRIES).map(([out, source]) => [out, join(root, source)]),
  ),
  outdir: dist,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  conditions: ["@toolbus/source"],
  external: allowed.flatMap((name) => [name, `${name}/*`]),
  chunkNames: "chunks/[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});
const strays = Object.values(result.metafile.outputs).flatMap((output) =>
  output.imports.filter((entry) => entry.external && !isAllowed(entry.path)).map((e) => e.path),
);

// Declarations, one per client source file, under dist/types with the source's layout. Only
// the client's own files are emitted: the types it shows from the workspace are in
// src/generated, and a zod schema it keeps internally is written out by the compiler.
const config = ts.getParsedCommandLineOfConfigFile(
  join(root, "tsconfig.build.json"),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
if (!config) throw new Error("tsconfig.build.json cannot be read.");
const program = ts.createProgram(config.fileNames, {
  ...config.options,
  noEmit: false,
  declaration: true,
  emitDeclarationOnly: true,
  rootDir: join(root, "src"),
  outDir: join(dist, "types"),
});
const problems: ts.Diagnostic[] = [];
for (const source of program.getSourceFiles()) {
  if (!source.fileName.startsWith(join(root, "src"))) continue;
  const emitted = program.emit(
    source,
    (file, text) => {
      ts.sys.writeFile(file, text);
      const imports = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
      strays.push(...imports.filter((specifier) => !isAllowed(specifier)));
    },
    undefined,
    true,
  );
  problems.push(...emitted.diagnostics);
}
if (problems.length > 0) {
  throw new Error(ts.formatDiagnostics(problems, ts.createCompilerHost(config.options)));
}
if (strays.length > 0) {
  throw new Error(
    `The build imports packages it does not depend on: ${[...new Set(strays)].join(", ")}. Bundle them, generate their types or add them to dependencies.`,
  );
}

const written = Object.keys(result.metafile.outputs).map((file) => relative(root, file));
console.log(
  `Built ${manifest.name} ${manifest.version}: ${written.length} modules and declarations.`,
);
