import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const LINKS = [
  {
    platform: "github",
    url: "https://github.com/toolbus/toolbus",
    label: "Source on GitHub",
    tags: ["code", "community"],
  },
  {
    platform: "discord",
    url: "https://discord.gg/toolbus",
    label: "Chat on Discord",
    tags: ["community"],
  },
];
const TEXT = "The cat sat on the mat. It was happy.";

interface RunEvent {
  detailType: string;
  detail: Record<string, unknown>;
}

let system: TestToolbus;
let api: ApiServer;
let viewerKey: string;
let memberKey: string;
let memberKeyId: string;
const clients: Client[] = [];

beforeAll(async () => {
  system = await startTestToolbus({
    config: {
      modes: { default: "default", available: ["default", "review"] },
      tools: { static_links: { links: LINKS } },
    },
  });
  api = await serveApi(system.app, { port: 0 });
  viewerKey = (await createKey("mcp-viewer", "viewer")).key;
  const member = await createKey("mcp-member", "member");
  memberKey = member.key;
  memberKeyId = member.keyId;
  // Two tools only some callers see: one offered in review mode, one only to admins.
  const kit = await system.request("/v1/toolsets/mcp_kit", {
    method: "PUT",
    json: { name: "mcp_kit", description: "Tools registered by the MCP tests", owner: "mcp" },
  });
  expect(kit.status).toBe(201);
  for (const [id, availability] of [
    ["review_only", { modes: ["review"] }],
    ["admin_only", { minRole: "admin" }],
  ] as const) {
    const put = await system.request(`/v1/tools/${id}`, {
      method: "PUT",
      json: {
        id,
        toolset: "mcp_kit",
        title: `Tool ${id}`,
        description: "Registered by a test.",
        category: "utility",
        usageHint: "Only in tests.",
        inputSchema: { type: "object" },
        outputSchema: { type: "object" },
        availability,
      },
    });
    expect(put.status).toBe(201);
  }
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await api?.close();
  await system?.stop();
});

async function createKey(name: string, role: string) {
  const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; keyId: string };
}

/** The official SDK client over real HTTP, with a key and Toolbus headers. */
async function connect(
  options: { key?: string; headers?: Record<string, string>; query?: string } = {},
): Promise<Client> {
  const client = new Client({ name: "toolbus-mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(
    new URL(`${api.url}/mcp${options.query ?? ""}`),
    {
      requestInit: {
        headers: {
          Authorization: `Bearer ${options.key ?? system.adminKey}`,
          ...options.headers,
        },
      },
    },
  );
  clients.push(client);
  await client.connect(transport);
  return client;
}

function runClient(runId: string, key?: string): Promise<Client> {
  return connect({ headers: { "X-Toolbus-Run-Id": runId }, ...(key ? { key } : {}) });
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  callId?: string,
): Promise<CallToolResult> {
  return (await client.callTool({
    name,
    arguments: args,
    ...(callId ? { _meta: { "toolbus/callId": callId } } : {}),
  })) as CallToolResult;
}

async function runEvents(runId: string): Promise<RunEvent[]> {
  await system.settle();
  const response = await system.request(`/v1/runs/${runId}/events`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: RunEvent[] }).events;
}

async function callView(runId: string, callId: string) {
  const response = await system.request(`/v1/runs/${runId}/calls/${callId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    requestedBy: { id: string; role: string };
    result: { output: string; data: unknown };
  };
}

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

function text(result: CallToolResult): string {
  const [first] = result.content;
  expect(first?.type).toBe("text");
  return first?.type === "text" ? first.text : "";
}

describe("tools/list over MCP", () => {
  it("lists the caller's available tools with schemas, titles and annotations", async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: "toolbus" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining(["readability_analyzer", "static_links", "rss_feed", "admin_only"]),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      if (tool.outputSchema) expect(tool.outputSchema.type).toBe("object");
      expect(tool.title).toEqual(expect.any(String));
      expect(tool.annotations).toEqual({
        title: tool.title,
        readOnlyHint: expect.any(Boolean),
        openWorldHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
      });
    }

    const readability = byName.get("readability_analyzer");
    const stored = (await (await system.request("/v1/tools/readability_analyzer")).json()) as {
      title: string;
      description: string;
      usageHint: string;
      inputSchema: unknown;
      outputSchema: unknown;
    };
    expect(readability).toMatchObject({
      title: stored.title,
      description: `${stored.description}\n\nWhen to use: ${stored.usageHint}`,
      inputSchema: stored.inputSchema,
      outputSchema: stored.outputSchema,
      annotations: {
        title: stored.title,
        readOnlyHint: true,
        openWorldHint: false,
        idempotentHint: true,
      },
    });
    // rss_feed's input is a oneOf of objects: it gains type object and keeps its branches.
    expect(byName.get("rss_feed")?.inputSchema).toMatchObject({
      type: "object",
      oneOf: expect.any(Array),
    });
  });

  it("leaves out tools excluded by capability, mode or role", async () => {
    const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);
    const admin = await names(await connect());
    expect(admin).not.toContain("github_api"); // no GITHUB_TOKEN on this stage
    expect(admin).not.toContain("review_only");

    const member = await names(await connect({ key: memberKey }));
    expect(member).toContain("readability_analyzer");
    expect(member).not.toContain("admin_only");

    const byHeader = await names(await connect({ headers: { "X-Toolbus-Mode": "review" } }));
    expect(byHeader).toContain("review_only");
    const byQuery = await names(await connect({ query: "?mode=review" }));
    expect(byQuery).toContain("review_only");
  });

  it("refuses an unknown mode with a 400 before any MCP work", async () => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { "X-Toolbus-Mode": "party", accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_request" } });
  });
});

describe("tools/call over MCP", () => {
  it("calls readability_analyzer and static_links through the call path, announced on the run", async () => {
    const runId = system.runId();
    const client = await runClient(runId);
    await client.listTools(); // the client then checks structured content against the schemas

    const readability = await call(client, "readability_analyzer", { text: TEXT }, "read-1");
    expect(readability.isError).toBe(false);
    expect(readability._meta).toMatchObject({
      "toolbus/runId": runId,
      "toolbus/callId": "read-1",
      "toolbus/status": "succeeded",
    });
    const readView = await callView(runId, "read-1");
    expect(readability.structuredContent).toEqual(readView.result.data);
    expect(text(readability)).toBe(readView.result.output);
    expect(readability.structuredContent).toMatchObject({ sentences: 2 });

    const links = await call(client, "static_links", { tag: "community" });
    expect(links.isError).toBe(false);
    const linksCallId = links._meta?.["toolbus/callId"] as string;
    expect(linksCallId).toEqual(expect.any(String));
    expect(links.structuredContent).toMatchObject({
      total: 2,
      links: LINKS.map(({ platform, url, label }) => ({ platform, url, label })),
    });
    expect(text(links)).toContain("https://github.com/toolbus/toolbus");
    expect(links.structuredContent).toEqual((await callView(runId, linksCallId)).result.data);

    const events = await runEvents(runId);
    const seen = events.map((e) => `${e.detailType} ${e.detail.callId}`).sort();
    expect(seen).toEqual(
      [
        "ToolCallScheduled read-1",
        "ToolResultReceived read-1",
        `ToolCallScheduled ${linksCallId}`,
        `ToolResultReceived ${linksCallId}`,
      ].sort(),
    );
    const scheduled = events.find(
      (e) => e.detailType === "ToolCallScheduled" && e.detail.callId === "read-1",
    );
    expect(scheduled?.detail).toMatchObject({
      parentRunId: runId,
      toolId: "readability_analyzer",
      mode: "default",
      input: { text: TEXT },
      requestedBy: { id: "admin-bootstrap", role: "admin" },
    });
  });

  it("derives the run from the key and the call id when no run is named, and takes the call id from a header", async () => {
    const client = await connect({ headers: { "X-Toolbus-Call-Id": "from-header" } });
    const result = await call(client, "readability_analyzer", { text: TEXT });
    expect(result.isError).toBe(false);
    const runId = result._meta?.["toolbus/runId"] as string;
    expect(runId).toMatch(/^mcp-[0-9a-f]{32}$/);
    expect(result._meta?.["toolbus/callId"]).toBe("from-header");
    expect((await runEvents(runId)).map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("starts a new run for a call that names neither its run nor its call", async () => {
    const client = await connect({});
    const first = await call(client, "readability_analyzer", { text: TEXT });
    const second = await call(client, "readability_analyzer", { text: TEXT });
    expect(first._meta?.["toolbus/runId"]).toMatch(/^mcp-[0-9a-f-]{36}$/);
    expect(second._meta?.["toolbus/runId"]).toMatch(/^mcp-[0-9a-f-]{36}$/);
    expect(second._meta?.["toolbus/runId"]).not.toBe(first._meta?.["toolbus/runId"]);
  });

  it("is idempotent by call id: a repeat returns the same result and announces nothing new", async () => {
    const runId = system.runId();
    const client = await runClient(runId);
    const first = await call(client, "readability_analyzer", { text: TEXT }, "same");
    const again = await call(client, "readability_analyzer", { text: TEXT }, "same");
    expect(again).toEqual(first);
    expect(await runEvents(runId)).toHaveLength(2);

    const conflict = await rejection(
      call(client, "readability_analyzer", { text: "Other words." }, "same"),
    );
    expect(conflict.code).toBe(ErrorCode.InvalidParams);
    expect(conflict.message).toContain("different input");
    expect(conflict.data).toMatchObject({ code: "conflict" });
    expect(await runEvents(runId)).toHaveLength(2);
  });

  it("returns a failed tool as isError with the failure kind, not a protocol error", async () => {
    const runId = system.runId();
    const client = await runClient(runId);
    const result = await call(client, "github_api", {
      action: "get_readme",
      owner: "octocat",
      repo: "hello-world",
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const failure = result._meta?.["toolbus/failure"] as Record<string, unknown>;
    expect(failure).toMatchObject({
      kind: "unavailable",
      retryable: expect.any(Boolean),
      recovery: expect.any(String),
    });
    expect(text(result)).toBe(failure.message);
    expect(result._meta).toMatchObject({ "toolbus/runId": runId, "toolbus/status": "failed" });
    const events = await runEvents(runId);
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(events[1]?.detail).toMatchObject({ status: "failed", failure: { kind: "unavailable" } });
  });

  it("returns input that fails validation as isError naming each path, and records nothing", async () => {
    const runId = system.runId();
    const client = await runClient(runId);
    const result = await call(client, "readability_analyzer", { text: "", extra: 1 }, "bad");
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({
      "toolbus/runId": runId,
      "toolbus/callId": "bad",
      "toolbus/status": "rejected",
      "toolbus/issues": expect.arrayContaining([
        { path: "text", message: expect.any(String) },
        { path: "extra", message: "unknown field" },
      ]),
    });
    expect(text(result)).toContain("- text:");
    expect(text(result)).toContain("- extra: unknown field");
    expect((await system.request(`/v1/runs/${runId}/calls/bad`)).status).toBe(404);
    expect(await runEvents(runId)).toEqual([]);
  });

  it("answers an unknown tool, or one not offered in this mode, with InvalidParams", async () => {
    const runId = system.runId();
    const client = await runClient(runId);
    const unknown = await rejection(call(client, "no_such_tool", {}));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
    expect(unknown.message).toContain("no_such_tool");
    const wrongMode = await rejection(call(client, "review_only", {}));
    expect(wrongMode.code).toBe(ErrorCode.InvalidParams);
    expect(wrongMode.message).toContain("mode default");
    expect(await runEvents(runId)).toEqual([]);
  });

  it("refuses a malformed call id in _meta", async () => {
    const client = await runClient(system.runId());
    const error = await rejection(
      call(client, "readability_analyzer", { text: TEXT }, "no spaces"),
    );
    expect(error.code).toBe(ErrorCode.InvalidParams);
  });
});

describe("keys and roles on /mcp", () => {
  it("refuses a wrong or missing key with HTTP 401", async () => {
    await expect(connect({ key: "tbk_0000000000000000_not-a-key" })).rejects.toMatchObject({
      code: 401,
    });
    const response = await system.request("/mcp", {
      method: "POST",
      key: null,
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    expect(await response.json()).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("lets a viewer list tools but not call them, and writes nothing", async () => {
    const runId = system.runId();
    const client = await runClient(runId, viewerKey);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("readability_analyzer");
    const error = await rejection(call(client, "readability_analyzer", { text: TEXT }, "v1"));
    expect(error.code).toBe(ErrorCode.InvalidRequest);
    expect(error.message).toContain("member role");
    expect(error.data).toMatchObject({ code: "forbidden", requiredRole: "member" });
    expect((await system.request(`/v1/runs/${runId}/calls/v1`)).status).toBe(404);
    expect(await runEvents(runId)).toEqual([]);
  });

  it("lets a member call tools, recorded as that key", async () => {
    const runId = system.runId();
    const client = await runClient(runId, memberKey);
    const result = await call(client, "readability_analyzer", { text: TEXT }, "m1");
    expect(result.isError).toBe(false);
    expect((await callView(runId, "m1")).requestedBy).toEqual({ id: memberKeyId, role: "member" });
    const role = await rejection(call(client, "admin_only", {}));
    expect(role.message).toContain("admin role");
  });
});

describe("the /mcp endpoint over HTTP", () => {
  it("answers GET and DELETE with 405 and a JSON-RPC error: it is stateless", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await system.request("/mcp", { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        error: { code: -32000, message: expect.any(String) },
        id: null,
      });
    }
  });

  it("hands out no session id and answers with JSON for this caller only", async () => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 7, method: "tools/list" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-request-id")).toEqual(expect.any(String));
    const body = (await response.json()) as { id: number; result: { tools: unknown[] } };
    expect(body.id).toBe(7);
    expect(body.result.tools.length).toBeGreaterThan(0);
  });

  it("refuses a body over 256 KB with a 413, as the REST API does", async () => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "readability_analyzer", arguments: { text: "word ".repeat(60_000) } },
      },
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
  });

  it.each([
    ["tools/call", {}],
    ["tools/call", { name: 42 }],
    ["tools/list", { cursor: 5 }],
    ["initialize", {}],
  ])("answers %s with params %j as -32602 invalid params, in words", async (method, params) => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 7, method, params },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      id: number;
      error: { code: number; message: string };
    };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(new RegExp(`^Invalid params for ${method}: params`));
    // Not zod's dump: no JSON of issues, no internal words.
    expect(body.error.message).not.toMatch(/[[{]\s*"|ZodError|expected.*received.*\n/);
  });

  it("refuses a malformed run id header with a 400", async () => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { "X-Toolbus-Run-Id": "no spaces", accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: "invalid_request", details: [{ path: "x-toolbus-run-id" }] },
    });
  });
});

describe("a call still running when the wait ends", () => {
  let slow: TestToolbus;
  let slowApi: ApiServer;
  beforeAll(async () => {
    // No waiting at all: every call is still pending when tools/call answers.
    slow = await startTestToolbus({
      config: { calls: { defaultWaitSeconds: 0, maxWaitSeconds: 0 } },
    });
    slowApi = await serveApi(slow.app, { port: 0 });
  });
  afterAll(async () => {
    await slowApi?.close();
    await slow?.stop();
  });

  it("says so with the call id and status URL, and the same call id later returns the result", async () => {
    const runId = slow.runId();
    const client = new Client({ name: "toolbus-mcp-test", version: "1.0.0" });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${slowApi.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${slow.adminKey}`, "X-Toolbus-Run-Id": runId },
        },
      }),
    );
    await client.listTools();
    const pending = await call(client, "readability_analyzer", { text: TEXT }, "slow-1");
    expect(pending.isError).toBe(true);
    expect(pending.structuredContent).toBeUndefined();
    expect(pending._meta).toEqual({
      "toolbus/runId": runId,
      "toolbus/callId": "slow-1",
      "toolbus/status": "pending",
      "toolbus/statusUrl": `/v1/runs/${runId}/calls/slow-1`,
    });
    expect(text(pending)).toContain("still running");
    expect(text(pending)).toContain(`/v1/runs/${runId}/calls/slow-1`);

    await slow.settle();
    const done = await call(client, "readability_analyzer", { text: TEXT }, "slow-1");
    expect(done.isError).toBe(false);
    expect(done._meta).toMatchObject({ "toolbus/status": "succeeded" });
    expect(done.structuredContent).toMatchObject({ sentences: 2 });
  });
});
