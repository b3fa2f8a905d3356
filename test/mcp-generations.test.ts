import { request as httpRequest } from "node:http";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * /mcp on both protocol generations: 2026-07-28 (no initialize, a `_meta` envelope on every
 * request, `server/discover`, cache hints) and 2025-11-25 (stateless, plain JSON), with the
 * official second-generation client in each of its modes, and the DNS-rebinding guard.
 */

const MODERN = "2026-07-28";
const TEXT = "The cat sat on the mat. It was happy.";

let system: TestToolbus;
let api: ApiServer;
const clients: Client[] = [];

beforeAll(async () => {
  system = await startTestToolbus({ config: { mcp: { toolsListTtlSeconds: 30 } } });
  api = await serveApi(system.app, { port: 0 });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await api?.close();
  await system?.stop();
});

/** The official v2 client; `auto` negotiates the current revision, `legacy` speaks 2025. */
async function connect(mode: "auto" | "legacy", runId?: string): Promise<Client> {
  const client = new Client(
    { name: "toolbus-generations-test", version: "1.0.0" },
    { versionNegotiation: { mode } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
      requestInit: {
        headers: {
          Authorization: `Bearer ${system.adminKey}`,
          ...(runId ? { "X-Toolbus-Run-Id": runId } : {}),
        },
      },
    }),
  );
  clients.push(client);
  return client;
}

/** A raw 2026-07-28 request: the envelope in `_meta`, the method and name in headers. */
function modern(method: string, params: Record<string, unknown> = {}, headers = {}) {
  return system.request("/mcp", {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...headers,
    },
    json: {
      jsonrpc: "2.0",
      id: 11,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {},
          ...((params._meta as object | undefined) ?? {}),
        },
      },
    },
  });
}

describe("the official v2 client", () => {
  it("negotiates 2026-07-28 in auto mode, lists the caller's tools and calls one", async () => {
    const runId = system.runId();
    const client = await connect("auto", runId);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("readability_analyzer");
    const result = await client.callTool({
      name: "readability_analyzer",
      arguments: { text: TEXT },
    });
    expect(result.isError).toBe(false);
    expect(result._meta).toMatchObject({ "toolbus/runId": runId, "toolbus/status": "succeeded" });
    // The same call path as REST: the call is in its run's log.
    const events = await system.request(`/v1/runs/${runId}/events`);
    const { events: logged } = (await events.json()) as { events: { detailType: string }[] };
    expect(logged.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("speaks 2025-11-25 in legacy mode, against the same endpoint", async () => {
    const client = await connect("legacy");
    expect(client.getNegotiatedProtocolVersion()).not.toBe(MODERN);
    const result = await client.callTool({
      name: "readability_analyzer",
      arguments: { text: TEXT },
    });
    expect(result.isError).toBe(false);
  });
});

describe("2026-07-28 on the wire", () => {
  it("answers server/discover with the revision, Toolbus's name and a shared cache hint", async () => {
    const response = await modern("server/discover");
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({
      supportedVersions: [MODERN],
      resultType: "complete",
      cacheScope: "public",
      capabilities: { tools: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "toolbus" } },
    });
  });

  it("gives tools/list a private cache hint from the stage and a version that moves with the catalog", async () => {
    const before = (await (await modern("tools/list")).json()) as {
      result: {
        ttlMs: number;
        cacheScope: string;
        resultType: string;
        _meta: Record<string, string>;
      };
    };
    expect(before.result).toMatchObject({
      ttlMs: 30_000,
      cacheScope: "private",
      resultType: "complete",
    });
    const version = before.result._meta["toolbus/listVersion"];
    expect(version).toMatch(/^[0-9a-f]{16}$/);
    // Disabling a tool changes what this caller may use: a new version at once.
    const disabled = await system.request("/v1/tools/readability_analyzer/disable", {
      method: "POST",
    });
    expect(disabled.status).toBe(200);
    try {
      const after = (await (await modern("tools/list")).json()) as {
        result: { _meta: Record<string, string> };
      };
      expect(after.result._meta["toolbus/listVersion"]).not.toBe(version);
    } finally {
      await system.request("/v1/tools/readability_analyzer/enable", { method: "POST" });
    }
  });

  it("answers prompts and resources lists, private to the caller as tools/list is", async () => {
    // The registered MCP servers' prompts and resources (none registered here), federated for
    // this caller: kept as long as tools/list, and for this caller only.
    for (const method of ["prompts/list", "resources/list", "resources/templates/list"]) {
      const { result } = (await (await modern(method)).json()) as {
        result: Record<string, unknown>;
      };
      expect(result, method).toMatchObject({ ttlMs: 30_000, cacheScope: "private" });
    }
  });

  it("refuses a method name header that does not match the body, echoing the request id", async () => {
    const response = await modern("tools/list", {}, { "mcp-method": "tools/call" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ id: 11, error: { code: -32020 } });
  });

  it("answers removed methods (ping) with 404 and method not found", async () => {
    const response = await modern("ping");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ id: 11, error: { code: -32601 } });
  });

  it("refuses request state it never handed out", async () => {
    const response = await modern("tools/call", {
      name: "readability_analyzer",
      arguments: { text: TEXT },
      requestState: "forged",
    });
    const body = (await response.json()) as { error?: { code: number; data?: unknown } };
    // Refused as request state, not as some other bad parameter.
    expect(body.error).toMatchObject({ code: -32602, data: { reason: "invalid_request_state" } });
  });

  it("still runs a call through selection, budgets and the run's log", async () => {
    const runId = system.runId();
    const response = await modern(
      "tools/call",
      { name: "readability_analyzer", arguments: { text: TEXT } },
      { "x-toolbus-run-id": runId },
    );
    const { result } = (await response.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({
      resultType: "complete",
      isError: false,
      _meta: { "toolbus/runId": runId, "toolbus/status": "succeeded" },
    });
  });
});

/** A POST to the server with the Host and Origin a page of another site would send. */
async function postAs(headers: Record<string, string>): Promise<number> {
  return (await onTheWire(headers, { jsonrpc: "2.0", id: 1, method: "tools/list" })).status;
}

/** A POST to /mcp over a real socket, as the node server sends its answer: status and headers. */
function onTheWire(
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(`${api.url}/mcp`);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${system.adminKey}`,
          ...headers,
        },
      },
      (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, headers: response.headers });
      },
    );
    sent.on("error", reject);
    sent.end(JSON.stringify(body));
  });
}

describe("JSON answers on the wire", () => {
  it("go out whole, with their length, on either generation", async () => {
    const call = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "readability_analyzer", arguments: { text: TEXT } },
    };
    const legacy = await onTheWire({ "mcp-protocol-version": "2025-11-25" }, call);
    const current = await onTheWire(
      {
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "readability_analyzer",
      },
      {
        ...call,
        params: {
          ...call.params,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
    );
    for (const answer of [legacy, current]) {
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      expect(Number(answer.headers["content-length"])).toBeGreaterThan(0);
      expect(answer.headers["transfer-encoding"]).toBeUndefined();
    }
  });
});

describe("DNS-rebinding protection on /mcp", () => {
  it("refuses a request for another host name, even with a valid key", async () => {
    expect(await postAs({ host: "evil.example.com", origin: "http://evil.example.com" })).toBe(403);
  });

  it("refuses another host name before the key is looked at: 403, not 401", async () => {
    expect(await postAs({ host: "evil.example.com", authorization: "" })).toBe(403);
  });

  it("refuses a loopback host with a foreign origin", async () => {
    const { host } = new URL(api.url);
    expect(await postAs({ host, origin: "http://evil.example.com" })).toBe(403);
  });

  it("answers loopback, with or without an origin of its own (CLI and agents send none)", async () => {
    const { host, origin } = new URL(api.url);
    expect(await postAs({ host })).toBe(200);
    expect(await postAs({ host, origin })).toBe(200);
  });
});
