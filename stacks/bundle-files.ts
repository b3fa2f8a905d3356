import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/*
 * What a function loads on a cold start, read from its bundle's files: one file, or for a
 * function split into chunks (`SPLIT_HANDLERS` in ./bundling), its entry and every chunk the
 * entry imports statically, transitively. A chunk reached only through `import()` loads on
 * the first use of its path: it counts as lazy, apart. The stack tests hold the cold-start
 * size to the budgets (./budgets); the bench reports both.
 */

/** `import … from "./x.mjs"`, `import "./x.mjs"` and `export … from "./x.mjs"` (esbuild's output). */
const STATIC_IMPORT =
  /\b(?:import|export)\s*(?:(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*from\s*)?["'](\.\.?\/[^"']+)["']/g;
/** `import("./x.mjs")` with a literal specifier, as esbuild writes a split chunk's. */
const DYNAMIC_IMPORT = /\bimport\(\s*["'](\.\.?\/[^"']+)["']\s*\)/g;

const specifiers = (code: string, pattern: RegExp) =>
  [...code.matchAll(pattern)].map((match) => match[1] as string);

export interface BundleFiles {
  /** The entry and the chunks it imports statically, transitively: read on a cold start. */
  coldStart: string[];
  /** Chunks reached only through `import()`: read on the first use of their path. */
  lazy: string[];
}

/** The files of the bundle whose entry is `entry`, by when they are loaded. */
export function bundleFiles(entry: string): BundleFiles {
  const coldStart = reachable([resolve(entry)], (code) => specifiers(code, STATIC_IMPORT));
  const all = reachable([resolve(entry)], (code) => [
    ...specifiers(code, STATIC_IMPORT),
    ...specifiers(code, DYNAMIC_IMPORT),
  ]);
  const loaded = new Set(coldStart);
  return { coldStart, lazy: all.filter((file) => !loaded.has(file)) };
}

/** Sizes in bytes: on a cold start, lazily, and of the whole artifact. */
export function bundleSizes(entry: string): { coldStart: number; lazy: number; total: number } {
  const { coldStart, lazy } = bundleFiles(entry);
  const bytes = (files: string[]) => files.reduce((sum, file) => sum + statSync(file).size, 0);
  const sizes = { coldStart: bytes(coldStart), lazy: bytes(lazy) };
  return { ...sizes, total: sizes.coldStart + sizes.lazy };
}

/** The files' code, one after the other: what is checked for what a function holds. */
export function codeOf(files: readonly string[]): string {
  return files.map((file) => readFileSync(file, "utf8")).join("\n");
}

function reachable(from: string[], imports: (code: string) => string[]): string[] {
  const seen = new Set<string>();
  const queue = [...from];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(file, "utf8");
    for (const specifier of imports(code)) queue.push(resolve(dirname(file), specifier));
  }
  return [...seen];
}
