/**
 * Module hooks for tracing a call through another checkout of the repository (call-trace.ts):
 * its `@toolbus/*` imports resolve to its own packages (never this checkout's), third-party
 * packages it has not installed resolve from this checkout's node_modules, vitest's `inject`
 * is stood in for so its test helpers run outside vitest, and its source under packages/ and
 * functions/ is instrumented to say which file runs (instrument.ts).
 */
import { readFileSync } from "node:fs";
import type { LoadHook, ResolveHook } from "node:module";
import { relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { exportedFile, workspacePackages } from "./imports";
import { instrumentModule } from "./instrument";

export interface TraceHookData {
  /** The checkout being traced, absolute. */
  root: string;
  /** This checkout, absolute: where missing third-party packages are found. */
  here: string;
}

let root = "";
let here = "";
let rootUrl = "";
let packages: ReturnType<typeof workspacePackages> = new Map();
const stub = new URL("./vitest-inject.ts", import.meta.url).href;

export function initialize(data: TraceHookData): void {
  root = data.root;
  here = data.here;
  rootUrl = `${pathToFileURL(root).href}/`;
  packages = workspacePackages(root);
}

export const resolve: ResolveHook = async (specifier, context, next) => {
  const parent = context.parentURL;
  if (!parent?.startsWith(rootUrl)) return next(specifier, context);
  // Handed on as file URLs, so the TypeScript loader still marks them as TypeScript.
  if (specifier === "vitest" && parent.startsWith(`${rootUrl}test/`)) return next(stub, context);
  const workspace = /^(@toolbus\/[^/]+)(\/.*)?$/.exec(specifier);
  const found = workspace && packages.get(workspace[1] as string);
  const file = found && exportedFile(found.exports, `.${workspace?.[2] ?? ""}`);
  if (file) return next(pathToFileURL(`${root}/${file}`).href, context);
  try {
    return await next(specifier, context);
  } catch (error) {
    if (specifier.startsWith(".") || specifier.startsWith("node:") || root === here) throw error;
    // Not installed in the traced checkout: the same package from this one.
    const stand = pathToFileURL(`${here}/${relative(root, fileURLToPath(parent))}`).href;
    return next(specifier, { ...context, parentURL: stand });
  }
};

export const load: LoadHook = async (url, context, next) => {
  if (!url.startsWith(rootUrl)) return next(url, context);
  const file = relative(root, fileURLToPath(url)).split("\\").join("/");
  if (!isTraced(file)) return next(url, context);
  const source = instrumentModule(file, readFileSync(fileURLToPath(url), "utf8"));
  return { format: "module", source, shortCircuit: true };
};

/** The files a call is followed through: non-test TypeScript under packages/ and functions/. */
function isTraced(file: string): boolean {
  return (
    /^(packages\/[^/]+\/src|functions)\//.test(file) &&
    file.endsWith(".ts") &&
    !file.endsWith(".d.ts") &&
    !file.endsWith(".test.ts")
  );
}
