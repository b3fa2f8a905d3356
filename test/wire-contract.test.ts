import { readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { createToolbusClient } from "@toolbus/client";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import {
  agentFileView,
  apiKeyListView,
  callBody,
  callView,
  capabilitiesView,
  errorBody,
  healthView,
  promptView,
  runEventPageView,
  runView,
  selectionView,
  subscriptionView,
  toolListView,
  toolSearchView,
  toolsetWithToolsView,
  toolView,
} from "@toolbus/wire/schemas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as z from "zod";
import { lenient } from "../packages/client/src/lenient";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// One wire contract: the API declares its bodies and views with @toolbus/wire/schemas, and the
// typed client parses the API's answers with the very same schemas (read leniently). These
// tests pin that: the document the API serves is what the wire's schemas generate, real
// answers go through the client's parsers unchanged, and neither side declares a shape of
// its own beside the wire's.

const ROOT = resolve(import.meta.dirname, "..");

let system: TestToolbus;
let server: ApiServer;
let served: { components: { schemas: Record<string, unknown> } };

beforeAll(async () => {
  system = await startTestToolbus({ tools: builtinTools, toolsets: builtinToolsets });
  server = await serveApi(system.app, { port: 0 });
  served = (await (await system.request("/openapi.json", { key: null })).json()) as typeof served;
});

afterAll(async () => {
  await server?.close();
  await system?.stop();
});

/** The components an API that declares only these schemas (by their ids) documents. */
function componentsOf(schemas: readonly z.ZodType[]): Record<string, unknown> {
  const app = new OpenAPIHono();
  for (const [index, schema] of schemas.entries()) {
    app.openapi(
      createRoute({
        method: "get",
        path: `/${index}`,
        responses: { 200: { description: "", content: { "application/json": { schema } } } },
      }),
      (c) => c.json({}, 200),
    );
  }
  const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "", version: "" } });
  return (document.components?.schemas ?? {}) as Record<string, unknown>;
}

describe("the API's OpenAPI document", () => {
  it("documents each body and view as exactly what the wire's schema generates", () => {
    const wire = componentsOf([
      callBody,
      callView,
      errorBody,
      healthView,
      runEventPageView,
      runView,
      selectionView,
      subscriptionView,
      toolSearchView,
      toolsetWithToolsView,
      toolView,
      agentFileView,
    ]);
    expect(Object.keys(wire).length).toBeGreaterThanOrEqual(12);
    for (const [id, component] of Object.entries(wire)) {
      expect(served.components.schemas[id], id).toEqual(component);
    }
  });
});

describe("real answers of the API through the client's parsers", () => {
  /** A GET or POST answered by the API, as JSON. */
  async function answer(path: string, init: { method?: string; json?: unknown } = {}) {
    const response = await system.request(path, init);
    expect(response.ok, `${path}: ${response.status}`).toBe(true);
    return (await response.json()) as unknown;
  }

  it("are what the wire declares, field for field, and parse unchanged", async () => {
    const runId = system.runId();
    const call = await answer(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "The cat sat." }, wait: 10 },
    });
    const views: [string, z.ZodType, unknown][] = [
      ["call", callView, call],
      ["tools", toolListView, await answer("/v1/tools")],
      ["tool", toolView, await answer("/v1/tools/readability_analyzer")],
      ["toolset", toolsetWithToolsView, await answer("/v1/toolsets/text_analysis")],
      ["health", healthView, await answer("/health")],
      ["selection", selectionView, await answer("/v1/select", { method: "POST", json: {} })],
      [
        "prompt",
        promptView,
        await answer("/v1/prompt", { method: "POST", json: { format: "json" } }),
      ],
      ["events", runEventPageView, await answer(`/v1/runs/${runId}/events`)],
      ["run", runView, await answer(`/v1/runs/${runId}`)],
      ["capabilities", capabilitiesView, await answer("/v1/capabilities")],
      ["keys", apiKeyListView, await answer("/v1/keys")],
    ];
    for (const [name, view, body] of views) {
      // A plain wire schema drops what it does not declare: nothing may be dropped.
      expect(view.parse(body), name).toEqual(body);
      // The client's reading of it (lenient.ts) changes nothing either.
      expect(lenient(view).parse(body), name).toEqual(body);
    }
  });

  it("come out of the typed client as the API sent them", async () => {
    const client = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
    const runId = system.runId();
    const made = await client.call("readability_analyzer", { text: "Hi there." }, { runId });
    const raw = await answer(`/v1/runs/${runId}/calls/${made.callId}`);
    expect(await client.getCall(runId, made.callId)).toEqual(raw);
    expect(await client.tools.get("readability_analyzer")).toEqual(
      await answer("/v1/tools/readability_analyzer"),
    );
    expect(await client.select()).toEqual(await answer("/v1/select", { method: "POST", json: {} }));
  });

  it("keep a field a newer server adds, at any depth, and refuse one it left out", () => {
    const body = {
      tools: [{ ...(toolView.parse(anyTool()) as object), available: true, newer: 1 }],
      alsoNewer: { x: 1 },
    };
    expect(lenient(toolListView).parse(body)).toEqual(body);
    const { title: _title, ...untitled } = body.tools[0] as Record<string, unknown>;
    expect(lenient(toolListView).safeParse({ tools: [untitled] }).success).toBe(false);
  });
});

/** A stored tool, as `GET /v1/tools/{id}` shows one. */
function anyTool() {
  return {
    id: "x_tool",
    toolset: "text",
    title: "X",
    description: "Does x.",
    category: "utility",
    usageHint: "When x.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    revision: 1,
    updatedAt: "2026-11-27T00:00:00.000Z",
  };
}

/** Every .ts file under `dir` (relative to the repository), tests and generated files left out. */
async function sources(dir: string, skip: (path: string) => boolean = () => false) {
  const entries = await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !path.endsWith(".test.ts") && !path.includes("/generated/") && !skip(path));
  return Promise.all(
    files.map(async (path) => ({ path, text: await readFile(join(ROOT, path), "utf8") })),
  );
}

/** Where a source declares an object shape, or loosens one by hand. */
const OBJECT = /\bz\s*\.\s*(?:object|strictObject|looseObject)\s*\(/g;
const LOOSENED = /\.(?:passthrough|loose)\s*\(/;
/** Where a source names an OpenAPI component. */
const OWN_COMPONENT = /\.openapi\(\s*["'`]|\.meta\(\s*\{\s*id\s*:/;

/**
 * The schemas of the client that are not the API's: what the adapters take from their caller
 * and from a model. Any other object shape in the client is a copy of the wire's.
 */
const NOT_WIRE: Record<string, readonly string[]> = {
  "packages/client/src/adapters/shared.ts": ["adapterOptions"],
  "packages/client/src/adapters/openai.ts": ["functionCall"],
};

/** `file: name` for each object shape a source declares, by the constant it is part of. */
function objectShapes(path: string, text: string): string[] {
  return [...text.matchAll(OBJECT)].map((match) => {
    const before = text.slice(0, match.index);
    const owner = [...before.matchAll(/\bconst\s+(\w+)\s*=/g)].at(-1)?.[1] ?? "(none)";
    return `${path}: ${owner}`;
  });
}

describe("neither side keeps a copy of the contract", () => {
  it("has scans that find what they look for", () => {
    expect(objectShapes("a.ts", "const view = z\n  .object({ callId: z.string() });")).toEqual([
      "a.ts: view",
    ]);
    expect(objectShapes("a.ts", "import { callView } from '@toolbus/wire/schemas';")).toEqual([]);
    expect(LOOSENED.test("const view = callView.loose();")).toBe(true);
    expect(OWN_COMPONENT.test('const call = z.object({}).openapi("Call");')).toBe(true);
    expect(OWN_COMPONENT.test('const call = shape.meta({ id: "Call" });')).toBe(true);
  });

  it("the client (its command line apart) declares no shape of the API's: it parses with the wire's", async () => {
    // The command line's own schemas read its arguments, not the API's answers.
    const files = await sources("packages/client/src", (path) => path.includes("/cli/"));
    expect(files.length).toBeGreaterThan(5);
    const allowed = Object.entries(NOT_WIRE).flatMap(([path, names]) =>
      names.map((name) => `${path}: ${name}`),
    );
    const shapes = files.flatMap(({ path, text }) => objectShapes(path, text));
    expect(shapes.filter((shape) => !allowed.includes(shape))).toEqual([]);
    // The allowance is for what is there: a name that went away leaves the list too.
    expect(allowed.filter((shape) => !shapes.includes(shape))).toEqual([]);
    expect(files.filter(({ text }) => LOOSENED.test(text)).map(({ path }) => path)).toEqual([]);
  });

  it("the API names no component of its own but harness's render request", async () => {
    const files = await sources("packages/http/src/api");
    expect(files.length).toBeGreaterThan(5);
    const naming = files.filter(({ text }) =>
      text.split("\n").some((line) => OWN_COMPONENT.test(line) && !/AgentRenderRequest/.test(line)),
    );
    expect(naming.map(({ path }) => path)).toEqual([]);
  });
});
