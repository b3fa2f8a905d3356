import { ListRulesCommand } from "@aws-sdk/client-eventbridge";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { createApi } from "@toolbus/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAM_HANDLER } from "../packages/core/src/wiring";
import { SseReader } from "./support/sse";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * GET /v1/events: every run's events in one stage-wide order, filtered by an event pattern,
 * paged by cursor or followed over text/event-stream; and replay of a time window from it.
 * All against the real system: DynamoDB Local, the local bus and the stream's own handler.
 */
let system: TestToolbus;
let receiver: Upstream;

beforeAll(async () => {
  receiver = await startUpstream((_request, response) => {
    response.writeHead(204).end();
  });
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
});

interface Page {
  events: { eventKey: string; detailType: string; detail: Record<string, unknown> }[];
  cursor: string;
  more: boolean;
}

async function page(query: string, init: { key?: string } = {}): Promise<Page> {
  const response = await system.request(`/v1/events${query}`, init);
  expect(response.status).toBe(200);
  return (await response.json()) as Page;
}

/** Every page from the cursor on, until the stream has nothing more. */
async function allAfter(cursor: string, pattern?: unknown): Promise<Page["events"]> {
  const events: Page["events"] = [];
  const filter = pattern ? `&pattern=${encodeURIComponent(JSON.stringify(pattern))}` : "";
  for (let at = cursor; ; ) {
    const next = await page(`?cursor=${at}&limit=3${filter}`);
    events.push(...next.events);
    if (next.cursor === at && !next.more) return events;
    at = next.cursor;
  }
}

async function call(runId: string, callId: string, text = "Short words here.") {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text }, callId, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the stage-wide event stream", () => {
  it("holds every event of every run once, in pages that resume by cursor", async () => {
    // Without a cursor a reader starts at the end: what happens from now on.
    const start = await page("");
    expect(start.events).toEqual([]);
    const [first, second] = [system.runId(), system.runId()];
    await call(first, "a");
    await call(second, "b");
    await call(first, "c");
    const events = (await allAfter(start.cursor)).filter((event) =>
      [first, second].includes(String(event.detail.parentRunId)),
    );
    expect(events.map((event) => event.eventKey).sort()).toEqual(
      [
        `${first}/a/scheduled`,
        `${first}/a/result`,
        `${second}/b/scheduled`,
        `${second}/b/result`,
        `${first}/c/scheduled`,
        `${first}/c/result`,
      ].sort(),
    );
    // Calls made one after the other appear in that order.
    const order = events.map((event) => String(event.detail.callId));
    expect(order.lastIndexOf("a")).toBeLessThan(order.indexOf("b"));
    expect(order.lastIndexOf("b")).toBeLessThan(order.indexOf("c"));
  });

  it("keeps only what an event pattern matches, as the bus carried it", async () => {
    const start = await page("");
    const runId = system.runId();
    await call(runId, "kept");
    await call(system.runId(), "other");
    const results = await allAfter(start.cursor, {
      "detail-type": ["ToolResultReceived"],
      detail: { parentRunId: [runId] },
    });
    expect(results.map((event) => event.eventKey)).toEqual([`${runId}/kept/result`]);
    // A prefix pattern over the run id, across both detail types.
    const byPrefix = await allAfter(start.cursor, {
      source: ["toolbus"],
      detail: { parentRunId: [{ prefix: runId }] },
    });
    expect(byPrefix.map((event) => event.detailType).sort()).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("starts from a time with since", async () => {
    const runId = system.runId();
    await call(runId, "before");
    await pause(20);
    const since = new Date().toISOString();
    await call(runId, "after");
    const pattern = encodeURIComponent(JSON.stringify({ detail: { parentRunId: [runId] } }));
    const found = await page(`?since=${encodeURIComponent(since)}&pattern=${pattern}`);
    expect(found.events.map((event) => event.detail.callId)).toEqual(["after", "after"]);
  });

  it("refuses bad patterns, cursors and times with a 400 that names them", async () => {
    const cases: [string, string][] = [
      ["pattern", "not json"],
      ["pattern", JSON.stringify({ detail: { status: "failed" } })],
      ["pattern", JSON.stringify({ detail: { n: [{ numeric: [">", "x"] }] } })],
      ["pattern", "[".repeat(5_000)],
      ["pattern", `{"detail":{"a":["${"x".repeat(5_000)}"]}}`],
      ["cursor", "abc"],
      ["cursor", "9".repeat(40)],
      ["cursor", "-1"],
      ["since", "yesterday"],
      ["limit", "0"],
      ["limit", "100000000000000000000"],
    ];
    for (const [name, value] of cases) {
      const response = await system.request(`/v1/events?${name}=${encodeURIComponent(value)}`);
      expect(response.status, `${name}=${value.slice(0, 40)}`).toBe(400);
      const body = (await response.json()) as { error: { code: string; details?: unknown } };
      expect(body.error.code).toBe("invalid_request");
      expect(JSON.stringify(body.error.details)).toContain(name);
    }
    // NUL and a lone surrogate (as JSON escapes) are valid values in a pattern: matched as given.
    const odd = String.raw`{"detail":{"a":["\u0000\ud800"]}}`;
    const response = await system.request(`/v1/events?pattern=${encodeURIComponent(odd)}`);
    expect(response.status).toBe(200);
  });

  it("needs a key that may read", async () => {
    const response = await system.request("/v1/events", { key: null });
    expect(response.status).toBe(401);
  });

  it("is fed locally by the run logs' only writer: it holds what they hold, not what the bus carried", async () => {
    // On AWS the table's change stream of run-log entries feeds it (stream-writer.test.ts);
    // locally the process that writes the table puts its chunks with the entries, and the bus
    // has no rule for it.
    expect(system.toolbus.rules.find((rule) => rule.handler === STREAM_HANDLER)).toMatchObject({
      feed: "run-logs",
      pattern: { source: ["toolbus"] },
    });
    const rules = await system.eventBridge.send(
      new ListRulesCommand({ EventBusName: system.busName }),
    );
    expect(rules.Rules?.map((rule) => rule.Name)).not.toContain("stream");
    const start = await page("");
    const runId = system.runId();
    // A forged event on the bus: no such call was ever recorded.
    await system.bus.putEvents({
      Entries: [
        {
          Source: "toolbus",
          DetailType: "ToolCallScheduled",
          Detail: JSON.stringify({
            eventKey: `${runId}/forged/scheduled`,
            parentRunId: runId,
            callId: "forged",
            toolId: "readability_analyzer",
            scheduledAt: new Date().toISOString(),
          }),
          EventBusName: system.busName,
        },
      ],
    });
    await call(runId, "real");
    const events = await allAfter(start.cursor, { detail: { parentRunId: [runId] } });
    expect(events.map((event) => event.detail.callId)).toEqual(["real", "real"]);
  });
});

describe("following the stage's events over text/event-stream", () => {
  it("sends matching events live with resumable ids, and resumes after Last-Event-ID", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, followIntervalMs: 20 });
    const runId = system.runId();
    const pattern = encodeURIComponent(JSON.stringify({ detail: { parentRunId: [runId] } }));
    const open = (headers: Record<string, string> = {}) =>
      app.request(`/v1/events?pattern=${pattern}`, {
        headers: {
          authorization: `Bearer ${system.adminKey}`,
          accept: "text/event-stream",
          ...headers,
        },
      });
    const response = await open();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const stream = new SseReader(response);
    let lastId: string;
    try {
      await call(runId, "one");
      await stream.until(() => stream.frames.length >= 2, 10_000);
      expect(stream.frames.map((frame) => frame.event).sort()).toEqual([
        "ToolCallScheduled",
        "ToolResultReceived",
      ]);
      lastId = stream.frames.at(-1)?.id as string;
      expect(lastId).toMatch(/^\d+$/);
    } finally {
      await stream.cancel();
    }
    // Events while nobody listened come back to a reader that resumes from its last id.
    await call(runId, "two");
    const resumed = new SseReader(await open({ "last-event-id": lastId }));
    try {
      await resumed.until(() => resumed.frames.length >= 2, 10_000);
      expect(resumed.frames.map((frame) => JSON.parse(frame.data).detail.callId)).toEqual([
        "two",
        "two",
      ]);
    } finally {
      await resumed.cancel();
    }
  });
});

describe("replaying a time window to a subscription", () => {
  it("queues the window's matching events as replays, and nothing outside it", async () => {
    const runId = system.runId();
    await call(runId, "early");
    await pause(20);
    const from = new Date().toISOString();
    await call(runId, "inside");
    const to = new Date().toISOString();
    await pause(20);
    await call(runId, "late");
    const created = await system.request("/v1/subscriptions", {
      method: "POST",
      json: {
        name: "window",
        pattern: { "detail-type": ["ToolResultReceived"], detail: { parentRunId: [runId] } },
        target: { kind: "webhook", url: `${receiver.origin}/window` },
      },
    });
    const { subscription } = (await created.json()) as { subscription: { id: string } };
    const replay = await system.request(`/v1/subscriptions/${subscription.id}/replay`, {
      method: "POST",
      json: { from, to },
    });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toMatchObject({ queued: 1, complete: true });
    await system.toolbus.subscriptions.retryDue();
    const bodies = receiver.requests
      .filter((request) => request.url.pathname === "/window")
      .map((request) => JSON.parse(request.body) as { data: { callId: string }; replay?: boolean });
    expect(bodies.map((body) => [body.data.callId, body.replay])).toEqual([["inside", true]]);
    // A window that ends before it starts is refused.
    const backwards = await system.request(`/v1/subscriptions/${subscription.id}/replay`, {
      method: "POST",
      json: { from: to, to: from },
    });
    expect(backwards.status).toBe(400);
  });
});
