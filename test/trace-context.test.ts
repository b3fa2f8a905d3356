import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DynamoCallStore } from "@toolbus/core/store/dynamodb";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTraceparent } from "../packages/core/src/observability/trace-context";
import { testDynamoDbClient } from "./support/dynamodb";
import { type McpUpstream, startMcpUpstream } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * A W3C trace given on a REST call follows the call everywhere: the call record, both of its
 * events in the run's log, and the request a registered http tool sends upstream (as a new
 * span of the same trace), and so does one made over MCP with `_meta.traceparent`, up to a
 * registered MCP server. A call without one, or with a malformed one, starts its own. The
 * calls of a trace are found by its id.
 */
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

let upstream: Upstream;
let mcpUpstream: McpUpstream;
let api: ApiServer;
let system: TestToolbus;
const seen: Array<string | undefined> = [];

beforeAll(async () => {
  upstream = await startUpstream((request, response) => {
    const header = request.headers.traceparent;
    seen.push(Array.isArray(header) ? header[0] : header);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ id: "7", name: "Widget" }));
  });
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await system.request("/v1/registered-toolsets/traced", {
    method: "PUT",
    json: {
      kind: "http",
      name: "traced",
      description: "An upstream that records trace headers",
      owner: "team-trace",
      tools: [
        {
          id: "traced_get_item",
          title: "Get an item",
          description: "Reads one item.",
          category: "reference",
          usageHint: "Tests.",
          url: `${upstream.origin}/items/{id}`,
          inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        },
      ],
    },
  });
  expect(registered.status).toBe(201);
  mcpUpstream = await startMcpUpstream([
    {
      tool: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
      run: () => ({ content: [{ type: "text", text: "echoed" }] }),
    },
  ]);
  const mcp = await system.request("/v1/registered-toolsets/traced_mcp", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "traced_mcp",
      description: "An MCP server that records trace headers",
      owner: "team-trace",
      url: mcpUpstream.url,
      defaults: { category: "reference" },
    },
  });
  expect(mcp.status).toBe(201);
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await upstream?.close();
  await mcpUpstream?.close();
});

async function runEvents(runId: string) {
  const response = await system.request(`/v1/runs/${runId}/events`);
  return ((await response.json()) as { events: Array<{ detailType: string; detail: unknown }> })
    .events;
}

async function tracedCall(traceparent?: string) {
  const runId = system.runId();
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "traced_get_item", input: { id: "7" }, callId: "c1", wait: 10 },
    ...(traceparent ? { headers: { traceparent } } : {}),
  });
  expect(response.status).toBe(200);
  const calls = new DynamoCallStore({
    client: DynamoDBDocumentClient.from(testDynamoDbClient()),
    tableName: system.tableName,
  });
  const record = await calls.get(runId, "c1");
  let events = await runEvents(runId);
  for (let i = 0; events.length < 2 && i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    events = await runEvents(runId);
  }
  const upstreamTrace = parseTraceparent(seen.at(-1));
  return { record, events, upstreamTrace };
}

describe("trace context", () => {
  it("follows a caller's trace into the record, both events and the upstream request", async () => {
    const { record, events, upstreamTrace } = await tracedCall(`00-${TRACE}-${CALLER_SPAN}-01`);
    expect(record?.status).toBe("succeeded");
    expect(record?.trace).toEqual({ traceId: TRACE, parentId: CALLER_SPAN, sampled: true });
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    for (const event of events) {
      expect((event.detail as { trace?: { traceId: string } }).trace?.traceId).toBe(TRACE);
    }
    // The same trace, a new span: the upstream's work hangs under this call, not the caller.
    expect(upstreamTrace).toMatchObject({ traceId: TRACE, sampled: true });
    expect(upstreamTrace?.parentId).not.toBe(CALLER_SPAN);
  });

  it.each([
    ["no traceparent", undefined],
    ["a malformed traceparent", `00-${TRACE.toUpperCase()}-${CALLER_SPAN}-01`],
  ])("starts a trace of its own for a call with %s", async (_name, header) => {
    const { record, events, upstreamTrace } = await tracedCall(header);
    const traceId = record?.trace?.traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(TRACE.toLowerCase());
    for (const event of events) {
      expect((event.detail as { trace?: { traceId: string } }).trace?.traceId).toBe(traceId);
    }
    expect(upstreamTrace?.traceId).toBe(traceId);
  });

  it("follows a trace given in MCP _meta to a registered MCP server", async () => {
    const runId = system.runId();
    const client = new Client({ name: "trace-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${system.adminKey}`, "X-Toolbus-Run-Id": runId },
        },
      }),
    );
    try {
      const traceId = "0af7651916cd43dd8448eb211c80319c";
      const result = await client.callTool({
        name: "echo",
        arguments: {},
        _meta: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      });
      expect(result.isError).toBeFalsy();
      const toolsCall = mcpUpstream.headers.findLast((headers) => headers.traceparent);
      expect(parseTraceparent(String(toolsCall?.traceparent))).toMatchObject({ traceId });
      const trace = (await (await system.request(`/v1/traces/${traceId}`)).json()) as {
        calls: Array<{ parentRunId: string; toolId: string; traceId: string }>;
      };
      expect(trace.calls).toEqual([
        expect.objectContaining({ parentRunId: runId, toolId: "echo", traceId }),
      ]);
    } finally {
      await client.close();
    }
  });

  it("finds the calls of one trace across runs, oldest first", async () => {
    const traceId = "5f3ab2c1d4e5f60718293a4b5c6d7e8f";
    const runs = [system.runId(), system.runId()];
    for (const runId of runs) {
      const response = await system.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "traced_get_item", input: { id: "7" }, callId: "c1", wait: 10 },
        headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
      });
      expect(response.status).toBe(200);
    }
    const response = await system.request(`/v1/traces/${traceId}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      traceId: string;
      calls: Array<{ parentRunId: string; callId: string; status: string }>;
    };
    expect(body.traceId).toBe(traceId);
    expect(body.calls.map((call) => [call.parentRunId, call.callId, call.status])).toEqual(
      runs.map((runId) => [runId, "c1", "succeeded"]),
    );
    const limited = await system.request(`/v1/traces/${traceId}?limit=1`);
    expect(((await limited.json()) as { calls: unknown[] }).calls).toHaveLength(1);
  });

  it("answers an unknown trace with no calls, and a malformed id with 400", async () => {
    const unknown = await system.request(`/v1/traces/${"ab".repeat(16)}`);
    expect(await unknown.json()).toEqual({ traceId: "ab".repeat(16), calls: [] });
    for (const bad of ["XYZ", "A".repeat(32), "ab".repeat(17), "%00".repeat(11)]) {
      expect((await system.request(`/v1/traces/${bad}`)).status).toBe(400);
    }
    expect((await system.request(`/v1/traces/${"ab".repeat(16)}?limit=101`)).status).toBe(400);
  });
});
