import { createServer } from "node:net";
import {
  type BuiltinToolId,
  type BuiltinTools,
  type CallView,
  type CatalogDiff,
  createToolbusClient,
  type HttpToolsetRegistration,
  type RunEvent,
  ToolbusClientError,
  type ToolInput,
  type ToolsetRegistered,
} from "@toolbus/client";
import { defineTool, ToolFailure } from "@toolbus/core";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { type McpUpstream, startMcpUpstream } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const TEXT = "The cat sat on the mat. It was happy. Then it slept in the sun.";

/** A registered tool the client has no types for, failing the way an upstream would. */
const alwaysFails = defineTool({
  spec: {
    id: "test_always_fails",
    toolset: "test_fixtures",
    title: "Always fails",
    description: "Fails with upstream_error.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ reason: z.string() }),
  output: z.object({}),
  async execute(input) {
    throw new ToolFailure({
      kind: "upstream_error",
      message: `The upstream said no: ${input.reason}.`,
      retryable: true,
      recovery: "replan",
    });
  },
});

/** Slow enough that a call without wait is still pending when it is answered. */
const slow = defineTool({
  spec: {
    id: "test_slow",
    toolset: "test_fixtures",
    title: "Slow",
    description: "Takes a moment.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ ms: z.number().int().max(2000) }),
  output: z.object({ slept: z.number() }),
  async execute(input) {
    await new Promise((resolve) => setTimeout(resolve, input.ms));
    return { output: `slept ${input.ms} ms`, data: { slept: input.ms } };
  },
});

let system: TestToolbus;
let server: ApiServer;
let client: ReturnType<typeof createToolbusClient>;

beforeAll(async () => {
  system = await startTestToolbus({
    tools: [...builtinTools, alwaysFails, slow],
    toolsets: [
      ...builtinToolsets,
      { name: "test_fixtures", description: "Test tools", owner: "tests", kind: "builtin" },
    ],
  });
  server = await serveApi(system.app, { port: 0 });
  client = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
});
afterAll(async () => {
  await server?.close();
  await system?.stop();
});

async function collect<T>(iterable: AsyncIterable<T>, count = Number.POSITIVE_INFINITY) {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
    if (items.length >= count) break;
  }
  return items;
}

function summary(events: RunEvent[]) {
  return events.map((event) => `${event.detail.callId}:${event.detailType}`);
}

async function readability(runId: string, callId: string) {
  const call = await client.call(
    "readability_analyzer",
    { text: TEXT },
    { runId, callId, wait: 10 },
  );
  await system.settle();
  return call;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}

describe("the catalog through the client", () => {
  it("lists the built-in tools with whether each is available", async () => {
    const tools = await client.tools.list();
    const ids = tools.map((tool) => tool.id);
    for (const tool of builtinTools) expect(ids).toContain(tool.spec.id);
    const readabilityTool = tools.find((tool) => tool.id === "readability_analyzer");
    expect(readabilityTool).toMatchObject({
      toolset: "text_analysis",
      category: "enhance",
      available: true,
      inputSchema: expect.objectContaining({ type: "object" }),
    });
  });

  it("passes filters through: category and availability", async () => {
    const enhance = await client.tools.list({ category: "enhance" });
    expect(enhance.length).toBeGreaterThan(0);
    expect(enhance.every((tool) => tool.category === "enhance")).toBe(true);
    const unavailable = await client.tools.list({ available: false });
    expect(unavailable.every((tool) => !tool.available && (tool.reasons?.length ?? 0) > 0)).toBe(
      true,
    );
  });

  it("gets one tool and lists the toolsets", async () => {
    const tool = await client.tools.get("static_links");
    expect(tool).toMatchObject({ id: "static_links", revision: expect.any(Number) });
    const toolsets = await client.toolsets.list();
    expect(toolsets.map((toolset) => toolset.name)).toContain("text_analysis");
    const detail = await client.toolsets.get("text_analysis");
    expect(detail.tools.map((t) => t.id)).toContain("readability_analyzer");
  });

  it("has input and output types for exactly the built-in tools", () => {
    const typed = {
      calendar: true,
      github_api: true,
      link_validator: true,
      readability_analyzer: true,
      rss_feed: true,
      static_links: true,
      web_search: true,
    } satisfies Record<BuiltinToolId, true>;
    expect(Object.keys(typed).sort()).toEqual(builtinTools.map((tool) => tool.spec.id).sort());
  });
});

describe("calling a tool through the client", () => {
  it("returns the finished call with typed data", async () => {
    const runId = system.runId();
    const call = await client.call(
      "readability_analyzer",
      { text: TEXT },
      { runId, callId: "typed", wait: 10 },
    );
    expect(call).toMatchObject({
      parentRunId: runId,
      callId: "typed",
      toolId: "readability_analyzer",
      toolset: "text_analysis",
      status: "succeeded",
      requestedBy: { id: "admin-bootstrap" },
    });
    if (call.status !== "succeeded") throw new Error(`expected succeeded, got ${call.status}`);
    expect(call.result.fallback).toBeUndefined();
    if (call.result.fallback) throw new Error("no fallback expected");
    const data = call.result.data;
    expectTypeOf(data).toEqualTypeOf<BuiltinTools["readability_analyzer"]["output"]>();
    expectTypeOf(data.fleschReadingEase).toBeNumber();
    expect(data.sentences).toBe(3);
    expect(data.words).toBe(15);
    expect(data.fleschReadingEase).toBeGreaterThan(80);
    expect(data.interpretation).toMatch(/easy/);
    expect(call.result.output).toEqual(expect.any(String));
  });

  it("types every built-in tool's input and rejects wrong ones at compile time", () => {
    expectTypeOf<ToolInput<"readability_analyzer">>().toEqualTypeOf<{ text: string }>();
    expectTypeOf<ToolInput<"static_links">>().toMatchTypeOf<{ limit?: number }>();
    expectTypeOf<ToolInput<"some_registered_tool">>().toBeUnknown();
    // Never run: only the compiler looks at these.
    const compileOnly = () => {
      // @ts-expect-error text must be a string
      void client.call("readability_analyzer", { text: 42 }, { runId: "r" });
      // @ts-expect-error unknown field for a strict input
      void client.call("readability_analyzer", { text: "x", extra: true }, { runId: "r" });
      // @ts-expect-error a run id is required
      void client.call("readability_analyzer", { text: "x" }, {});
      // A tool the client has no types for takes any input and gives unknown data.
      const other = client.call("test_always_fails", { anything: 1 }, { runId: "r" });
      expectTypeOf(other).resolves.toEqualTypeOf<CallView<"test_always_fails">>();
    };
    expect(typeof compileOnly).toBe("function");
  });

  it("types web_search's data as static_links' when its fallback answered", () => {
    const compileOnly = (call: CallView<"web_search">) => {
      if (call.status !== "succeeded") return;
      if (call.result.fallback) {
        expectTypeOf(call.result.data).toEqualTypeOf<BuiltinTools["static_links"]["output"]>();
        expectTypeOf(call.result.fallback.to).toEqualTypeOf<"static_links">();
      } else {
        expectTypeOf(call.result.data).toEqualTypeOf<BuiltinTools["web_search"]["output"]>();
      }
    };
    expect(typeof compileOnly).toBe("function");
  });

  it("returns the same call for the same call id and input, and getCall reads it", async () => {
    const runId = system.runId();
    const first = await readability(runId, "again");
    const second = await readability(runId, "again");
    expect(second).toEqual(first);
    const read = await client.getCall<"readability_analyzer">(runId, "again");
    expect(read).toEqual(first);
    if (read.status === "succeeded" && !read.result.fallback) {
      expectTypeOf(read.result.data.words).toBeNumber();
    }
  });

  it("answers a call still running without wait with its current view", async () => {
    const runId = system.runId();
    const call = await client.call("test_slow", { ms: 400 }, { runId, callId: "later", wait: 0 });
    expect(["pending", "running"]).toContain(call.status);
    expect(call.result).toBeUndefined();
    let finished = call;
    for (let attempt = 0; attempt < 100 && !finished.result; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      finished = await client.getCall(runId, "later");
    }
    expect(finished).toMatchObject({ status: "succeeded", result: { data: { slept: 400 } } });
  });

  it("gives a tool failure as a failed call, not an error", async () => {
    const call = await client.call(
      "test_always_fails",
      { reason: "quota" },
      { runId: system.runId(), wait: 10 },
    );
    expect(call.status).toBe("failed");
    if (call.status !== "failed") return;
    expect(call.result.data).toBeNull();
    expect(call.result.failure).toEqual({
      kind: "upstream_error",
      message: "The upstream said no: quota.",
      retryable: true,
      recovery: "replan",
    });
  });
});

describe("a run's events through the client", () => {
  it("pages through the log with a small page size, in order", async () => {
    const runId = system.runId();
    await readability(runId, "first");
    await readability(runId, "second");
    const pages: string[] = [];
    const fetchPages: typeof fetch = (input, init) => {
      pages.push(String(input));
      return fetch(input, init);
    };
    const counting = createToolbusClient({
      baseUrl: server.url,
      apiKey: system.adminKey,
      fetch: fetchPages,
    });
    const stream = counting.events(runId, { limit: 1 });
    const events = await collect(stream);
    expect(summary(events)).toEqual([
      "first:ToolCallScheduled",
      "first:ToolResultReceived",
      "second:ToolCallScheduled",
      "second:ToolResultReceived",
    ]);
    // One page per log entry (a synchronous call's two events share one, so a page is a whole
    // call) and the empty page that ends the log; each page after the first resumes from the
    // cursor of the one before.
    expect(pages).toHaveLength(3);
    expect(pages.every((url) => url.includes("limit=1"))).toBe(true);
    expect(pages.map((url) => new URL(url).searchParams.has("cursor"))).toEqual([
      false,
      true,
      true,
    ]);
    const result = events[1];
    if (result?.detailType !== "ToolResultReceived") throw new Error("expected a result event");
    expect(result.detail).toMatchObject({ status: "succeeded", toolId: "readability_analyzer" });

    // The stream's cursor resumes after what it delivered.
    await readability(runId, "third");
    expect(summary(await collect(client.events(runId, { cursor: stream.cursor ?? "" })))).toEqual([
      "third:ToolCallScheduled",
      "third:ToolResultReceived",
    ]);
  });

  it("follows a run: the backlog, then events of a call made after following started", async () => {
    const runId = system.runId();
    await readability(runId, "before");
    const seen: RunEvent[] = [];
    for await (const event of client.events(runId, { follow: true })) {
      seen.push(event);
      // The backlog is in: the stream is live, so this call's events arrive over it.
      if (seen.length === 2) await readability(runId, "after");
      if (seen.length === 4) break;
    }
    expect(summary(seen)).toEqual([
      "before:ToolCallScheduled",
      "before:ToolResultReceived",
      "after:ToolCallScheduled",
      "after:ToolResultReceived",
    ]);
  });

  it("reconnects with Last-Event-ID when the server ends the stream, without repeats", async () => {
    // The same system, with streams that end after 300 ms as on Lambda.
    const shortStreams = createApi({
      ...system.toolbus.apiDeps,
      followIntervalMs: 20,
      followMaxMs: 300,
    });
    const shortServer = await serveApi(shortStreams, { port: 0 });
    try {
      const connections: (string | null)[] = [];
      // Event requests only: the client also asks /health once where streams are served.
      const recording: typeof fetch = (input, init) => {
        if (String(input).includes("/events")) {
          connections.push(new Headers(init?.headers).get("last-event-id"));
        }
        return fetch(input, init);
      };
      const follower = createToolbusClient({
        baseUrl: shortServer.url,
        apiKey: system.adminKey,
        fetch: recording,
      });
      const runId = system.runId();
      await readability(runId, "one");
      const seen: RunEvent[] = [];
      let later: Promise<unknown> | undefined;
      const stream = follower.events(runId, { follow: true, reconnectDelayMs: 20 });
      for await (const event of stream) {
        seen.push(event);
        // The loop keeps reading meanwhile: long enough for the server to end the stream at
        // least twice before the next call.
        if (seen.length === 2) {
          later = new Promise((resolve) => setTimeout(resolve, 800)).then(() =>
            readability(runId, "two"),
          );
        }
        if (seen.length === 4) break;
      }
      await later;
      expect(summary(seen)).toEqual([
        "one:ToolCallScheduled",
        "one:ToolResultReceived",
        "two:ToolCallScheduled",
        "two:ToolResultReceived",
      ]);
      expect(connections.length).toBeGreaterThanOrEqual(3);
      expect(connections[0]).toBeNull();
      // Every reconnection resumes from the log's cursor.
      expect(connections.slice(1).every((id) => typeof id === "string" && id.length > 0)).toBe(
        true,
      );
      expect(stream.cursor).toEqual(expect.any(String));
    } finally {
      await shortServer.close();
    }
  });

  it("stops following quietly when the AbortSignal fires", async () => {
    const runId = system.runId();
    await readability(runId, "only");
    const controller = new AbortController();
    const seen: RunEvent[] = [];
    const started = Date.now();
    setTimeout(() => controller.abort(), 300);
    for await (const event of client.events(runId, { follow: true, signal: controller.signal })) {
      seen.push(event);
    }
    expect(summary(seen)).toEqual(["only:ToolCallScheduled", "only:ToolResultReceived"]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("errors through the client", () => {
  async function failure(promise: Promise<unknown>): Promise<ToolbusClientError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ToolbusClientError);
    return error as ToolbusClientError;
  }

  it("maps 401 for a wrong key", async () => {
    const stranger = createToolbusClient({ baseUrl: server.url, apiKey: "not-a-key" });
    const error = await failure(stranger.tools.list());
    expect(error).toMatchObject({
      name: "ToolbusClientError",
      status: 401,
      code: "unauthorized",
      message: "The API key is not valid.",
      requestId: expect.any(String),
      context: { method: "GET", path: "/v1/tools" },
    });
    expect(error.retryable).toBe(false);
    // Following does not retry what cannot succeed.
    const followed = await failure(collect(stranger.events("run-1", { follow: true })));
    expect(followed.status).toBe(401);
  });

  it("maps 400 with the details of every failing path", async () => {
    const error = await failure(
      client.call("readability_analyzer", { text: "" }, { runId: system.runId() }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
    expect(error.details).toContainEqual({ path: "text", message: expect.any(String) });
  });

  it("maps 404 for an unknown tool and an unknown call", async () => {
    const tool = await failure(client.tools.get("no_such_tool"));
    expect(tool).toMatchObject({ status: 404, code: "not_found" });
    expect(tool.message).toContain("no_such_tool");
    const call = await failure(client.getCall(system.runId(), "nothing"));
    expect(call).toMatchObject({ status: 404, code: "not_found" });
  });

  it("maps 409 for a call id reused with other input", async () => {
    const runId = system.runId();
    await readability(runId, "taken");
    const error = await failure(
      client.call(
        "readability_analyzer",
        { text: "Other words here." },
        { runId, callId: "taken" },
      ),
    );
    expect(error).toMatchObject({ status: 409, code: "conflict" });
  });

  it("wraps a network failure, keeping the cause", async () => {
    const offline = createToolbusClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}`,
      apiKey: system.adminKey,
    });
    const error = await failure(offline.tools.list());
    expect(error.code).toBe("network_error");
    expect(error.status).toBeUndefined();
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.retryable).toBe(true);
  });

  it("refuses a base URL that is not http(s) before any request", () => {
    for (const baseUrl of ["ftp://example.com", "127.0.0.1:8787", ""]) {
      expect(() => createToolbusClient({ baseUrl, apiKey: "k" })).toThrow(
        expect.objectContaining({ name: "ToolbusClientError", code: "invalid_base_url" }),
      );
    }
  });

  it("rejects a response that is not what the API promises", async () => {
    const impostor: typeof fetch = async () =>
      Response.json({ parentRunId: "r", status: "succeeded" }, { status: 200 });
    const odd = createToolbusClient({ baseUrl: server.url, apiKey: "k", fetch: impostor });
    const error = await failure(odd.getCall("r", "c"));
    expect(error.code).toBe("invalid_response");
    expect(error.details).toContainEqual({ path: "callId", message: expect.any(String) });
  });
});

describe("keys, capabilities, selection, prompt and agent files through the client", () => {
  it("creates, lists and revokes a key, which then stops working", async () => {
    const created = await client.keys.create({ name: "client-test", role: "member" });
    expect(created).toMatchObject({ name: "client-test", role: "member", key: expect.any(String) });
    const member = createToolbusClient({ baseUrl: server.url, apiKey: created.key });
    expect((await member.tools.list()).length).toBeGreaterThan(0);

    const listed = await client.keys.list();
    expect(listed.find((key) => key.keyId === created.keyId)).toMatchObject({
      name: "client-test",
    });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const revoked = await client.keys.revoke(created.keyId);
    expect(revoked).toMatchObject({ keyId: created.keyId, revokedAt: expect.any(String) });
    await expect(member.tools.list()).rejects.toMatchObject({ status: 401 });
  });

  it("lists and refreshes capabilities", async () => {
    const listed = await client.capabilities.list();
    expect(listed.length).toBeGreaterThan(0);
    expect(listed[0]).toMatchObject({ name: expect.any(String), available: expect.any(Boolean) });
    const refreshed = await client.capabilities.refresh();
    expect(refreshed.map((c) => c.name).sort()).toEqual(listed.map((c) => c.name).sort());
  });

  it("selects tools and renders the prompt section", async () => {
    const selection = await client.select({ allow: ["readability_analyzer", "static_links"] });
    expect(selection.tools).toContain("readability_analyzer");
    expect(selection.excluded.find((entry) => entry.tool === "web_search")?.reasons).toContain(
      "not_allowed",
    );
    const prompt = await client.prompt({ allow: ["readability_analyzer"] });
    expect(prompt.markdown).toContain("Readability analyzer");
    expect(prompt.tools.map((tool) => tool.id)).toEqual(["readability_analyzer"]);
    expect(prompt.bytes).toBe(Buffer.byteLength(prompt.markdown));
  });

  it("renders an agent file for one harness and for all", async () => {
    const agent = {
      name: "reviewer",
      description: "Reviews drafts.",
      prompt: "Review the draft.",
      tools: ["Read", "Grep"],
    };
    const one = await client.renderAgent({ harness: "claude-code", agent });
    expectTypeOf(one.path).toBeString();
    expect(one).toMatchObject({ harness: "claude-code", path: ".claude/agents/reviewer.md" });
    expect(one.content).toContain("Review the draft.");
    const all = await client.renderAgent({ harness: "all", agent });
    expect(all.files.map((file) => file.harness).sort()).toEqual([
      "claude-code",
      "copilot",
      "opencode",
    ]);
  });

  it("reads the health route", async () => {
    expect(await client.health()).toMatchObject({ status: "ok", stage: expect.any(String) });
  });
});

describe("registered toolsets through the client", () => {
  // Its own system: registered toolsets call loopback upstreams, which only an allow-list
  // lets through the outbound guard.
  let external: TestToolbus;
  let externalServer: ApiServer;
  let admin: ReturnType<typeof createToolbusClient>;
  let upstream: Upstream;
  let mcp: McpUpstream;

  const stationTool = (name: string, description: string) => ({
    tool: { name, description, inputSchema: { type: "object" as const, properties: {} } },
    run: () => ({ content: [{ type: "text" as const, text: description }] }),
  });

  const httpRegistration = (): HttpToolsetRegistration => ({
    kind: "http",
    name: "client_acme",
    description: "Acme's inventory API",
    owner: "team-acme",
    tools: [
      {
        id: "client_acme_get_item",
        title: "Get an Acme item",
        description: "Reads one inventory item by id.",
        category: "reference",
        usageHint: "Look up an inventory item when the user names its id.",
        url: `${upstream.origin}/v1/items/{id}`,
        inputSchema: {
          type: "object",
          properties: { id: { type: "string" } },
          required: ["id"],
        },
      },
    ],
  });

  beforeAll(async () => {
    upstream = await startUpstream((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: "7", name: "Widget" }));
    });
    mcp = await startMcpUpstream([stationTool("search", "Finds stations.")]);
    external = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
    externalServer = await serveApi(external.app, { port: 0 });
    admin = createToolbusClient({ baseUrl: externalServer.url, apiKey: external.adminKey });
  });
  afterAll(async () => {
    await externalServer?.close();
    await external?.stop();
    await mcp?.close();
    await upstream?.close();
  });

  it("registers an http toolset, typed, telling a new toolset from a replaced one", async () => {
    const created = await admin.toolsets.register(httpRegistration());
    expectTypeOf(created).toEqualTypeOf<ToolsetRegistered>();
    expectTypeOf(created.diff).toEqualTypeOf<CatalogDiff>();
    expect(created).toMatchObject({
      created: true,
      toolset: { name: "client_acme", kind: "http", owner: "team-acme", revision: 1 },
      diff: { added: ["client_acme_get_item"], removed: [], changed: [], unchanged: [] },
    });
    expect(created.tools.map((tool) => [tool.id, tool.toolset, tool.implementation.kind])).toEqual([
      ["client_acme_get_item", "client_acme", "http"],
    ]);

    const replaced = await admin.toolsets.register(httpRegistration());
    expect(replaced).toMatchObject({
      created: false,
      toolset: { revision: 2 },
      diff: { added: [], unchanged: ["client_acme_get_item"] },
    });
    expect((await admin.tools.get("client_acme_get_item")).toolset).toBe("client_acme");
  });

  it("refreshes an MCP toolset with renames, answering with the diff", async () => {
    const registered = await admin.toolsets.register({
      kind: "mcp",
      name: "client_weather",
      description: "The weather team's MCP server",
      owner: "team-weather",
      url: mcp.url,
      // Served as the server lists them: holding changes for review is cli-review.test.ts's.
      updates: "follow",
    });
    expect(registered.diff.added).toEqual(["search"]);

    mcp.setTools([stationTool("search", "Finds stations."), stationTool("alerts", "Alerts.")]);
    const refreshed = await admin.toolsets.refresh("client_weather", {
      renames: { search: "weather_search" },
    });
    expect(refreshed.diff).toEqual({
      added: ["alerts", "weather_search"],
      removed: ["search"],
      changed: [],
      unchanged: [],
    });
    expect(refreshed.toolset.source?.renames).toEqual({ search: "weather_search" });
    expect(refreshed.tools.map((tool) => tool.id).sort()).toEqual(["alerts", "weather_search"]);
  });

  it("removes a toolset, refusing a stale If-Match revision with 409", async () => {
    const current = await admin.toolsets.get("client_acme");
    const stale = await admin.toolsets
      .remove("client_acme", { ifMatch: current.revision - 1 })
      .catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(ToolbusClientError);
    expect(stale).toMatchObject({ status: 409 });

    const removed = await admin.toolsets.remove("client_acme", { ifMatch: current.revision });
    expect(removed).toEqual({ removed: ["client_acme_get_item"] });
    const gone = await admin.tools.get("client_acme_get_item").catch((error: unknown) => error);
    expect(gone).toMatchObject({ status: 404 });
    expect(await admin.toolsets.remove("client_weather")).toEqual({
      removed: ["alerts", "weather_search"],
    });
  });

  it("maps a registration the API refuses to a ToolbusClientError with status 400 and paths", async () => {
    const registration = httpRegistration();
    const refused = await admin.toolsets
      .register({
        ...registration,
        name: "client_bad",
        tools: registration.tools.map((tool) => ({
          ...tool,
          id: "client_bad_get",
          url: `${upstream.origin}/v1/items/{sku}`,
        })),
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ToolbusClientError);
    expect(refused).toMatchObject({
      name: "ToolbusClientError",
      status: 400,
      code: "invalid_request",
      message: expect.stringContaining("{sku}"),
      context: { method: "PUT", path: "/v1/registered-toolsets/client_bad" },
    });
    // Nothing of it was written.
    const missing = await admin.toolsets.get("client_bad").catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404 });
  });
});
