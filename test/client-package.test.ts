import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The client as a user gets it: `npm pack` (which builds it), installed into a project of its
// own outside this repository, type-checked there with standard settings and run on plain
// node against a running Toolbus.

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, "..");
const CLIENT = join(REPO, "packages/client");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

let system: TestToolbus;
let server: ApiServer;
let scratch: string;
let project: string;
let tarball: string;

/** The version the repository tests with, so the install can come from npm's cache. */
async function devVersion(name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as {
    devDependencies: Record<string, string>;
  };
  const version = manifest.devDependencies[name];
  if (!version) throw new Error(`${name} is not a dev dependency of the repository`);
  return `${name}@${version}`;
}

const CONSUMER = `import { createToolbusClient, ToolbusClientError, type BuiltinToolId, type CallView } from "@toolbus/client";
import { toolbusTools as aiTools } from "@toolbus/client/ai";
import { toolbusTools as langchainTools } from "@toolbus/client/langchain";
import { toolbusTools as openaiTools } from "@toolbus/client/openai";
import { runCli } from "@toolbus/client/cli";

const client = createToolbusClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });

export async function typed(): Promise<number | undefined> {
  const call = await client.call("readability_analyzer", { text: "Hi." }, { runId: "r" });
  // @ts-expect-error a built-in tool's input is typed
  await client.call("readability_analyzer", { txt: "Hi." }, { runId: "r" });
  return call.status === "succeeded" ? call.result.data.fleschReadingEase : undefined;
}

export async function registered(): Promise<unknown> {
  // Any other tool id takes any input and gives unknown data.
  const call: CallView<string> = await client.call("weather_lookup", { city: "Oslo" }, { runId: "r" });
  return call.status === "succeeded" ? call.result.data : null;
}

export const ids: BuiltinToolId[] = ["web_search", "static_links"];
export const isError = (error: unknown) => error instanceof ToolbusClientError;
export const adapters = [aiTools, openaiTools, langchainTools, runCli] as const;
`;

const RUNTIME = `import { createToolbusClient } from "@toolbus/client";
import { toolbusTools } from "@toolbus/client/openai";

const client = createToolbusClient({
  baseUrl: process.env.TOOLBUS_ENDPOINT,
  apiKey: process.env.TOOLBUS_API_KEY,
});
const call = await client.call(
  "readability_analyzer",
  { text: "The cat sat on the mat. It was happy." },
  { runId: process.env.RUN_ID, wait: 10 },
);
const openai = await toolbusTools(client, { runId: process.env.RUN_ID });
console.log(JSON.stringify({ status: call.status, tools: openai.tools.map((t) => t.function.name) }));
`;

function tsconfig(module: string, moduleResolution: string) {
  return JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module,
      moduleResolution,
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ["node"],
    },
    include: ["src"],
  });
}

beforeAll(async () => {
  system = await startTestToolbus({ tools: builtinTools, toolsets: builtinToolsets });
  server = await serveApi(system.app, { port: 0 });
  scratch = await mkdtemp(join(tmpdir(), "toolbus-package-"));
  const packed = join(scratch, "packed");
  await mkdir(packed);
  // prepack builds the package first, as it does before a publish.
  await run(NPM, ["pack", "--pack-destination", packed], { cwd: CLIENT });
  const [file] = await readdir(packed);
  if (!file) throw new Error("npm pack wrote no tarball");
  tarball = join(packed, file);

  project = join(scratch, "project");
  await mkdir(join(project, "src"), { recursive: true });
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  const peers = await Promise.all(
    // The AI SDK's declarations import json-schema's types: with skipLibCheck off a project needs them.
    ["ai", "openai", "@langchain/core", "@types/node", "@types/json-schema"].map(devVersion),
  );
  // npm's cache first: the registry is asked only for what the cache lacks.
  await run(NPM, ["install", tarball, ...peers, "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
  });
  await writeFile(join(project, "src/consumer.ts"), CONSUMER);
  await writeFile(join(project, "run.mjs"), RUNTIME);
  await writeFile(join(project, "tsconfig.nodenext.json"), tsconfig("NodeNext", "NodeNext"));
  await writeFile(join(project, "tsconfig.bundler.json"), tsconfig("ESNext", "Bundler"));
}, 600_000);

afterAll(async () => {
  await server?.close();
  await system?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("the packed @toolbus/client", () => {
  it("depends only on published packages and ships built JavaScript with declarations", async () => {
    const manifest = JSON.parse(
      await readFile(join(project, "node_modules/@toolbus/client/package.json"), "utf8"),
    );
    expect(Object.keys(manifest.dependencies)).toEqual(["zod"]);
    expect(manifest.private).toBeUndefined();
    expect(manifest.engines.node).toBe(">=20");
    for (const entry of Object.values(manifest.exports) as ({ types: string } | string)[]) {
      if (typeof entry === "string") continue;
      await expect(
        stat(join(project, "node_modules/@toolbus/client", entry.types)),
      ).resolves.toBeTruthy();
    }
    const installed = await readdir(join(project, "node_modules"));
    expect(installed).not.toContain("tsx");
    expect(await readdir(join(project, "node_modules/@toolbus"))).toEqual(["client"]);
  });

  it.each([
    ["NodeNext", "tsconfig.nodenext.json"],
    ["Bundler", "tsconfig.bundler.json"],
  ])(
    "type-checks in a project with %s resolution and skipLibCheck off",
    async (_name, config) => {
      const checked = await run(process.execPath, [TSC, "-p", config], { cwd: project }).then(
        () => ({ code: 0, output: "" }),
        (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
      );
      expect(checked).toEqual({ code: 0, output: "" });
    },
    240_000,
  );

  it("calls a running Toolbus from plain node, adapters included", async () => {
    const runId = system.runId();
    const { stdout } = await run(process.execPath, ["run.mjs"], {
      cwd: project,
      env: {
        ...process.env,
        TOOLBUS_ENDPOINT: server.url,
        TOOLBUS_API_KEY: system.adminKey,
        RUN_ID: runId,
      },
    });
    const result = JSON.parse(stdout) as { status: string; tools: string[] };
    const selection = (await (
      await system.request("/v1/select", { method: "POST", json: {} })
    ).json()) as { tools: string[] };
    expect(result).toEqual({ status: "succeeded", tools: selection.tools });
    const events = await system.events<{ detailType: string }>(runId);
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("runs its command line on plain node", async () => {
    const bin = join(project, "node_modules/.bin/toolbus");
    const { stdout } = await run(bin, ["tools", "list", "--json"], {
      cwd: project,
      env: { ...process.env, TOOLBUS_ENDPOINT: server.url, TOOLBUS_API_KEY: system.adminKey },
    });
    const ids = (JSON.parse(stdout) as { id: string }[]).map((tool) => tool.id);
    expect(ids).toEqual(expect.arrayContaining(builtinTools.map((tool) => tool.spec.id)));
    const manifest = JSON.parse(await readFile(join(CLIENT, "package.json"), "utf8"));
    const version = await run(bin, ["--version"], { cwd: project });
    expect(version.stdout).toBe(`${manifest.version}\n`);
  });
});
