import { dirname, join } from "node:path";
import { REGISTERED_KINDS, registeredHandlerId, toolHandlerId } from "@toolbus/core";
import type { FunctionProps } from "sst/constructs";

/**
 * The AWS SDK's credential providers for everything but environment variables. Lambda always
 * gives a function its role's credentials as environment variables, which the default chain
 * tries first, so on Lambda these are never loaded: the chain imports each one lazily, only
 * when the ones before it found nothing. Bundled, they and the STS / SSO clients they carry
 * cost ~130 KB in every function; left external, a chain that ever did reach them would load
 * them from the runtime's own copy of the SDK.
 */
export const UNUSED_CREDENTIAL_PROVIDERS = [
  "@aws-sdk/credential-provider-http",
  "@aws-sdk/credential-provider-ini",
  "@aws-sdk/credential-provider-process",
  "@aws-sdk/credential-provider-sso",
  "@aws-sdk/credential-provider-web-identity",
] as const;

/**
 * The part of esbuild's plugin API these plugins use. SST builds with its own esbuild and the
 * bench with SST's too; typing against either copy's `Plugin` would not fit the other.
 */
export interface BundlePlugin {
  name: string;
  setup(build: {
    onResolve(
      options: { filter: RegExp },
      callback: (args: {
        importer: string;
        resolveDir: string;
      }) => { path: string; namespace: string } | undefined,
    ): void;
    onLoad(
      options: { filter: RegExp; namespace: string },
      callback: (args: { path: string }) => { contents: string; resolveDir: string; loader: "js" },
    ): void;
  }): void;
}

/**
 * zod's error messages in English only. zod's namespace re-exports every locale
 * (`z.locales.*`, ~370 KB minified), and a bundle that takes `z` whole (as @hono/zod-openapi
 * does) cannot drop them. Nothing here switches locale: zod's schemas import English
 * themselves, and `z.locales` keeps only `en`.
 */
export const zodEnglishOnly: BundlePlugin = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: join(args.resolveDir, "../locales/index.js"), namespace: "zod-english-only" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), "en.js"))};`,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

/** What the MCP SDK's Ajv checker is replaced with: it says so if anything constructs it. */
const AJV_PROVIDER_STUB = `export class AjvJsonSchemaValidator {
  constructor() {
    throw new Error("The MCP SDK's Ajv JSON Schema validator is not bundled: give the Client or Server a jsonSchemaValidator (CfWorkerJsonSchemaValidator).");
  }
}`;

/**
 * The MCP SDK without Ajv. Its Client and Server import their default JSON Schema checker,
 * Ajv with ajv-formats and fast-uri (~150 KB minified), statically, and construct it only when
 * given no `jsonSchemaValidator`. Ours are always given cfworker's (core's `mcp/server.ts`
 * and `registered/mcp-client.ts`), the library our own schema checks use: Ajv would only be
 * code to load on every cold start of the API and the MCP functions, never run.
 */
export const mcpSdkWithoutAjv: BundlePlugin = {
  name: "mcp-sdk-without-ajv",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/validation\/ajv-provider\.js$/ }, (args) =>
      /[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(args.importer)
        ? {
            path: join(args.resolveDir, "../validation/ajv-provider.js"),
            namespace: "mcp-sdk-without-ajv",
          }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "mcp-sdk-without-ajv" }, (args) => ({
      contents: AJV_PROVIDER_STUB,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

/**
 * The same for the MCP SDK's second generation (`@modelcontextprotocol/server`, which `/mcp`
 * runs): its default validator comes from its `_shims` entry, Ajv again. Ours is given one
 * (core's `mcp/server.ts`), so the shim is replaced by one that says so if constructed, and
 * passes on the one other thing the entry provides, Node's `process`.
 */
const MCP_V2_SHIMS_STUB = `export class DefaultJsonSchemaValidator {
  constructor() {
    throw new Error("The MCP SDK's Ajv JSON Schema validator is not bundled: give the Server a jsonSchemaValidator.");
  }
}
export { default as process } from "node:process";
export const CORS_IS_POSSIBLE = false;`;

export const mcpSdkV2WithoutAjv: BundlePlugin = {
  name: "mcp-sdk-v2-without-ajv",
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/(server|client)\/_shims$/ }, (args) => ({
      path: join(args.resolveDir, "mcp-v2-shims.js"),
      namespace: "mcp-sdk-v2-without-ajv",
    }));
    build.onLoad({ filter: /.*/, namespace: "mcp-sdk-v2-without-ajv" }, (args) => ({
      contents: MCP_V2_SHIMS_STUB,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

/** esbuild plugins every function is built with. */
const PLUGINS = [zodEnglishOnly, mcpSdkWithoutAjv, mcpSdkV2WithoutAjv];

/**
 * How every function is bundled: ESM for Node 24 on Graviton, minified, and with the AWS SDK
 * inside, not taken from the runtime. Measured (`npm run bench -- bundles`, README "Bundles"):
 *
 * - Size is not the reason to leave the SDK out. With it external a tool's bundle drops from
 *   391 KB to 141 KB, but the function still loads the same SDK, from the runtime's
 *   node_modules: dozens of unminified files read and compiled on every cold start.
 * - Cold start is the reason to keep it in: import plus the first event took a median 144 ms
 *   from the one minified file and 226 ms with the SDK loaded from node_modules (15 runs;
 *   earlier runs measured up to 3.9x).
 * - And correctness: the runtime's SDK is whatever version Lambda ships that week. Our clients
 *   rely on options of the version we pin and test (the request handler's
 *   `throwOnRequestTimeout`, `cacheMiddleware`); an older runtime copy ignores them silently,
 *   and a request to a hung dependency would wait for the socket instead of failing in 2 s.
 *
 * What is left out is only what Lambda never runs: the credential providers above, zod's
 * locales but English (`zodEnglishOnly`) and the MCP SDK's default Ajv (`mcpSdkWithoutAjv`).
 * No source maps: they would only feed the SST console and cost an upload custom resource.
 * The API is also split into chunks (`SPLIT_HANDLERS`).
 */
export const NODEJS: FunctionProps["nodejs"] = {
  format: "esm",
  minify: true,
  sourcemap: false,
  install: [],
  esbuild: { external: [...UNUSED_CREDENTIAL_PROVIDERS], plugins: PLUGINS },
};

/**
 * Functions built in chunks (ESM `.mjs` files beside the entry), by wiring-table handler id:
 * the API, the one function with rare paths (agent files, MCP, /docs, registrations, the
 * in-process handlers `npm start` uses). A cold start reads and compiles the entry and the
 * chunks it imports statically; a chunk behind `await import(...)` loads on that path's first
 * use. A function that runs one thing gains nothing from chunks and stays one file.
 */

/**
 * The built-in tools that may act as the person calling them (core's `connections.credentials`
 * may say `user` for them): their functions decrypt that person's connected account's tokens.
 */
export const USER_CREDENTIAL_TOOLS = ["calendar", "github_api"] as const;

/**
 * The functions that use connected accounts: the API (connecting, disconnecting) and those that
 * run tools acting as their caller. They are granted the connections key, and are split into
 * chunks so the token vault and the KMS client load only with the first connection used: a
 * stage that never acts as its callers never loads them.
 */
export const CONNECTION_HANDLERS: ReadonlySet<string> = new Set([
  "api",
  "api-stream",
  ...USER_CREDENTIAL_TOOLS.map(toolHandlerId),
  ...REGISTERED_KINDS.map(registeredHandlerId),
]);

/**
 * The functions built in chunks: the API (its rare paths), those that use connected accounts
 * (the vault), and the seed, which holds every tool's definition and so the way to the vault,
 * but never runs a call.
 */
export const SPLIT_HANDLERS: ReadonlySet<string> = new Set(["seed", ...CONNECTION_HANDLERS]);

/** How the function of `handler` is bundled: `NODEJS`, in chunks for `SPLIT_HANDLERS`. */
export function nodejsFor(handler: string): FunctionProps["nodejs"] {
  return SPLIT_HANDLERS.has(handler) ? { ...NODEJS, splitting: true } : NODEJS;
}

/**
 * What SST v2 passes esbuild for a function built with `nodejs` (its nodejs handler, ESM,
 * deploy mode), for tools that bundle a function the same way outside a synthesis: the bench's
 * bundle report. The stack tests check the bundles SST itself builds. Split, the entry is
 * written beside its chunks in `outfile`'s folder, named after the entry as SST names it.
 */
export function sstEsbuildOptions(entry: string, outfile: string, nodejs = NODEJS) {
  return {
    entryPoints: [entry],
    ...(nodejs?.splitting
      ? { splitting: true, outdir: dirname(outfile), outExtension: { ".js": ".mjs" } }
      : { outfile }),
    platform: "node" as const,
    bundle: true,
    format: "esm" as const,
    target: "esnext",
    mainFields: ["module", "main"],
    keepNames: true,
    minify: nodejs?.minify ?? false,
    sourcemap: false,
    metafile: true as const,
    logLevel: "silent" as const,
    external: ["sharp", "pg-native", ...(nodejs?.esbuild?.external ?? [])],
    plugins: PLUGINS,
    banner: {
      js: [
        `import { createRequire as topLevelCreateRequire } from 'module';`,
        `const require = topLevelCreateRequire(import.meta.url);`,
        `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
        `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
        "",
      ].join("\n"),
    },
  };
}
