import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DynamoCallStore } from "@toolbus/core/store/dynamodb";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTraceparent } from "../packages/core/src/observability/trace-context";
import { testDynamoDbClient } from "./support/dynamodb";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * A W3C trace given on a REST call follows the call everywhere: the call record, both of its
 * events in the run's log, and the request a registered http tool sends upstream (as a new
 * span of the same trace). A call without one, or with a malformed one, starts its own.
 */
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

let upstream: Upstream;
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
  const registered = await system.request("/v1/external-toolsets/traced", {
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
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await upstream?.close();
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
});
