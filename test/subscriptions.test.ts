import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookIdOf } from "../packages/wire/src/webhooks/signature";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * Subscriptions end to end: the API creates them, the bus hands every Toolbus event to the
 * dispatcher, and a real receiver on loopback gets each matching event, signed the Standard
 * Webhooks way, verified here by the `standardwebhooks` package (an implementation of the
 * scheme that is not ours).
 */
let system: TestToolbus;
let receiver: Upstream;
let failing: Upstream;

beforeAll(async () => {
  receiver = await startUpstream((_request, response) => {
    response.writeHead(204).end();
  });
  failing = await startUpstream((_request, response) => {
    response.writeHead(503, { "retry-after": "120" }).end("down for maintenance");
  });
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      subscriptions: {
        allowTargets: ["arn:aws:events:us-east-1:123456789012:event-bus/partner"],
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  await failing?.close();
});

async function keyFor(role: string): Promise<string> {
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: `sub-${role}`, role },
  });
  return ((await response.json()) as { key: string }).key;
}

interface Created {
  subscription: { id: string; status: string; pattern: string; owner: { id: string } };
  secret: string;
}

async function subscribe(body: unknown, key?: string): Promise<Response> {
  return system.request("/v1/subscriptions", {
    method: "POST",
    json: body,
    ...(key ? { key } : {}),
  });
}

async function created(body: unknown, key?: string): Promise<Created> {
  const response = await subscribe(body, key);
  expect(response.status).toBe(201);
  return (await response.json()) as Created;
}

async function call(runId: string, input: unknown = { text: "Short words here." }) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

const forRun = (upstream: Upstream, runId: string) =>
  upstream.requests.filter((request) => request.body.includes(runId));

describe("subscriptions", () => {
  it("delivers each matching event to a webhook, signed so a Standard Webhooks library verifies it", async () => {
    const runId = system.runId();
    const { subscription, secret } = await created({
      name: "results of this run",
      pattern: {
        source: ["toolbus"],
        "detail-type": ["ToolResultReceived"],
        detail: { parentRunId: [runId] },
      },
      target: { kind: "webhook", url: `${receiver.origin}/hook` },
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(subscription).toMatchObject({ status: "active" });
    await call(runId);
    await expect.poll(() => forRun(receiver, runId).length, { timeout: 10_000 }).toBe(1);
    const [request] = forRun(receiver, runId);
    const headers = Object.fromEntries(
      Object.entries(request?.headers ?? {}).map(([name, value]) => [name, String(value)]),
    );
    const verified = new Webhook(secret).verify(request?.body ?? "", headers) as {
      type: string;
      data: { parentRunId: string; eventKey: string; status: string };
    };
    expect(verified.type).toBe("ToolResultReceived");
    expect(verified.data).toMatchObject({ parentRunId: runId, status: "succeeded" });
    expect(headers["webhook-id"]).toBe(webhookIdOf(verified.data.eventKey));
    // Another secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(
        request?.body ?? "",
        headers,
      ),
    ).toThrow();
  });

  it("delivers one event to every subscription it matches, and to none it does not", async () => {
    const runId = system.runId();
    const hook = (path: string) => ({ kind: "webhook", url: `${receiver.origin}/${path}` });
    await created({ name: "a", pattern: { detail: { parentRunId: [runId] } }, target: hook("a") });
    await created({
      name: "b",
      pattern: { detail: { parentRunId: [{ prefix: runId }], toolId: ["readability_analyzer"] } },
      target: hook("b"),
    });
    await created({
      name: "c",
      pattern: {
        $or: [{ detail: { toolId: ["web_search"] } }, { detail: { parentRunId: [runId] } }],
      },
      target: hook("c"),
    });
    await created({
      name: "never",
      pattern: { detail: { parentRunId: [runId], status: ["failed"] } },
      target: hook("never"),
    });
    await call(runId);
    // Two events (scheduled and result) to each of a, b and c; none to "never".
    await expect.poll(() => forRun(receiver, runId).length, { timeout: 10_000 }).toBe(6);
    const paths = forRun(receiver, runId).map((request) => request.url.pathname);
    expect(paths.sort()).toEqual(["/a", "/a", "/b", "/b", "/c", "/c"]);
  });

  it("says what is wrong with a bad pattern or target, and creates nothing", async () => {
    const before = (
      (await (await system.request("/v1/subscriptions")).json()) as {
        subscriptions: unknown[];
      }
    ).subscriptions.length;
    const hook = { kind: "webhook", url: `${receiver.origin}/x` };
    const cases: Array<[unknown, RegExp]> = [
      [{ name: "n", pattern: { detail: { toolId: "web_search" } }, target: hook }, /pattern/],
      [{ name: "n", pattern: {}, target: hook }, /empty objects/],
      [{ name: "a\u0000b", pattern: { source: ["toolbus"] }, target: hook }, /control/],
      [{ name: "x\ud800y", pattern: { source: ["toolbus"] }, target: hook }, /half characters/],
      [
        {
          name: "n",
          pattern: { source: ["toolbus"] },
          target: { kind: "webhook", url: "https://user:pw@hooks.example.com/x" },
        },
        /no user or password/,
      ],
      [
        {
          name: "n",
          pattern: { detail: { toolId: Array.from({ length: 400 }, (_, i) => `tool_${i}`) } },
          target: hook,
        },
        /too long/,
      ],
      [{ name: "n", pattern: "{not json", target: hook }, /pattern/],
      [
        { name: "n", pattern: { detail: { n: [{ numeric: [">", "x"] }] } }, target: hook },
        /numeric/,
      ],
      [
        {
          name: "n",
          pattern: { source: ["toolbus"] },
          target: { kind: "webhook", url: "http://example.com/x" },
        },
        /https/,
      ],
      [
        {
          name: "n",
          pattern: { source: ["toolbus"] },
          target: {
            kind: "eventbridge",
            busArn: "arn:aws:events:us-east-1:123456789012:event-bus/other",
          },
        },
        /allowTargets/,
      ],
      [
        { name: "n", pattern: { source: ["toolbus"] }, target: { kind: "ftp", url: "ftp://x" } },
        /target/,
      ],
      [{ name: "n", pattern: { source: ["toolbus"] }, target: hook, surprise: true }, /surprise/],
    ];
    for (const [body, message] of cases) {
      const response = await subscribe(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.text(), JSON.stringify(body)).toMatch(message);
    }
    const allowed = await subscribe({
      name: "partner bus",
      pattern: { source: ["toolbus"] },
      target: {
        kind: "eventbridge",
        busArn: "arn:aws:events:us-east-1:123456789012:event-bus/partner",
      },
    });
    expect(allowed.status).toBe(201);
    const after = (
      (await (await system.request("/v1/subscriptions")).json()) as {
        subscriptions: Array<{ id: string }>;
      }
    ).subscriptions;
    expect(after.length).toBe(before + 1);
    const { subscription } = (await allowed.json()) as Created;
    expect(
      (await system.request(`/v1/subscriptions/${subscription.id}`, { method: "DELETE" })).status,
    ).toBe(204);
  });

  it("lets a member manage only its own subscriptions, an admin all, and a viewer none", async () => {
    const [alice, bob, viewer] = await Promise.all([
      keyFor("member"),
      keyFor("member"),
      keyFor("viewer"),
    ]);
    const body = {
      name: "mine",
      pattern: { source: ["toolbus"] },
      target: { kind: "webhook", url: `${receiver.origin}/m` },
    };
    const { subscription } = await created(body, alice);
    const id = subscription.id;
    expect((await system.request(`/v1/subscriptions/${id}`, { key: alice })).status).toBe(200);
    for (const [method, path] of [
      ["GET", `/v1/subscriptions/${id}`],
      ["POST", `/v1/subscriptions/${id}/pause`],
      ["DELETE", `/v1/subscriptions/${id}`],
      ["POST", `/v1/subscriptions/${id}/rotate-secret`],
      ["GET", `/v1/subscriptions/${id}/failures`],
    ] as const) {
      // Not "forbidden": another key's subscription does not exist as far as bob can tell.
      expect((await system.request(path, { method, key: bob })).status, `${method} ${path}`).toBe(
        404,
      );
    }
    const bobs = (await (await system.request("/v1/subscriptions", { key: bob })).json()) as {
      subscriptions: unknown[];
    };
    expect(bobs.subscriptions).toEqual([]);
    expect((await subscribe(body, viewer)).status).toBe(403);
    // The admin sees and changes anyone's.
    const paused = await system.request(`/v1/subscriptions/${id}/pause`, { method: "POST" });
    expect(await paused.json()).toMatchObject({ status: "paused", pausedBecause: "requested" });
    expect((await system.request(`/v1/subscriptions/${id}`, { method: "DELETE" })).status).toBe(
      204,
    );
    expect((await system.request(`/v1/subscriptions/${id}`, { key: alice })).status).toBe(404);
  });

  it("queues nothing while paused and delivers again once resumed", async () => {
    const runId = system.runId();
    const { subscription } = await created({
      name: "pausable",
      pattern: {
        "detail-type": ["ToolResultReceived"],
        detail: { parentRunId: [{ prefix: runId }] },
      },
      target: { kind: "webhook", url: `${receiver.origin}/p` },
    });
    await system.request(`/v1/subscriptions/${subscription.id}/pause`, { method: "POST" });
    await call(`${runId}-while-paused`);
    const resumed = await system.request(`/v1/subscriptions/${subscription.id}/resume`, {
      method: "POST",
    });
    expect(await resumed.json()).toMatchObject({ status: "active", failureStreak: 0 });
    await call(`${runId}-after`);
    await expect.poll(() => forRun(receiver, `${runId}-after`).length, { timeout: 10_000 }).toBe(1);
    expect(forRun(receiver, `${runId}-while-paused`)).toEqual([]);
  });

  it("keeps a failed delivery on the retry schedule, honouring the receiver's Retry-After", async () => {
    const runId = system.runId();
    const { subscription } = await created({
      name: "down",
      pattern: { "detail-type": ["ToolResultReceived"], detail: { parentRunId: [runId] } },
      target: { kind: "webhook", url: `${failing.origin}/hook` },
    });
    const sent = Date.now();
    await call(runId);
    await expect.poll(() => forRun(failing, runId).length, { timeout: 10_000 }).toBe(1);
    // Not dead: no failures yet, it waits for its next attempt.
    const failures = await system.request(`/v1/subscriptions/${subscription.id}/failures`);
    expect(await failures.json()).toEqual({ failures: [], cursor: null });
    const { DynamoDeliveryStore } = await import(
      "../packages/core/src/store/dynamodb/subscriptions"
    );
    const { createDocumentClient } = await import("../packages/core/src/store/dynamodb");
    const { testDynamoDbClient } = await import("./support/dynamodb");
    const deliveries = new DynamoDeliveryStore({
      client: createDocumentClient(testDynamoDbClient()),
      tableName: system.tableName,
    });
    const due = await deliveries.listDue(new Date(Date.now() + 3600_000).toISOString());
    const mine = due.find((delivery) => delivery.subscriptionId === subscription.id);
    expect(mine).toMatchObject({ status: "pending", attempts: 1, lastError: { status: 503 } });
    expect(mine?.lastError?.message).toContain("down for maintenance");
    expect(Date.parse(mine?.nextAttemptAt ?? "")).toBeGreaterThanOrEqual(sent + 120_000);
  });

  it("replays a run's logged events that the pattern matches, marked as replays, as often as asked", async () => {
    const runId = system.runId();
    await call(runId);
    const { subscription, secret } = await created({
      name: "replayed",
      pattern: { "detail-type": ["ToolResultReceived"], detail: { parentRunId: [runId] } },
      target: { kind: "webhook", url: `${receiver.origin}/replay` },
    });
    for (const round of [1, 2]) {
      const response = await system.request(`/v1/subscriptions/${subscription.id}/replay`, {
        method: "POST",
        json: { runId },
      });
      expect(response.status).toBe(202);
      // The run logged two events; the pattern takes the result only.
      expect(await response.json()).toMatchObject({ queued: 1, events: 2 });
      await system.toolbus.subscriptions.retryDue();
      expect(forRun(receiver, runId)).toHaveLength(round);
    }
    for (const request of forRun(receiver, runId)) {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
      );
      const body = new Webhook(secret).verify(request.body, headers) as {
        replay: boolean;
        data: { eventKey: string };
      };
      expect(body.replay).toBe(true);
      expect(headers["webhook-id"]).toBe(webhookIdOf(body.data.eventKey));
    }
    const none = await system.request(`/v1/subscriptions/${subscription.id}/replay`, {
      method: "POST",
      json: { runId: `${runId}-never` },
    });
    expect(await none.json()).toMatchObject({ queued: 0, events: 0 });
    const bad = await system.request(`/v1/subscriptions/${subscription.id}/replay`, {
      method: "POST",
      json: { runId: "../etc" },
    });
    expect(bad.status).toBe(400);
  });

  it("answers a forged cursor or an odd event key with 400, never 500", async () => {
    const { subscription } = await created({
      name: "cursors",
      pattern: { detail: { parentRunId: ["run-cursors"] } },
      target: { kind: "webhook", url: `${receiver.origin}/cursors` },
    });
    const base = `/v1/subscriptions/${subscription.id}`;
    const forged = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString("base64url");
    for (const cursor of [
      forged(["SUBSCRIPTION#x", "DELIVERY#x", ""]),
      forged(["SUBSCRIPTION#x", `DELIVERY#${"é".repeat(1000)}`, "2026"]),
      forged({ pk: "x" }),
      "not base64 at all!",
    ]) {
      const response = await system.request(
        `${base}/failures?cursor=${encodeURIComponent(cursor)}`,
      );
      expect(response.status, cursor.slice(0, 40)).toBe(400);
    }
    const emoji = await system.request(`${base}/redrive`, {
      method: "POST",
      json: { eventKeys: ["🙂".repeat(300)] },
    });
    expect(emoji.status).toBe(400);
  });

  it("matches envelope fields of the event as the bus delivered it", async () => {
    const runId = system.runId();
    await created({
      name: "envelope",
      pattern: {
        source: ["toolbus"],
        "detail-type": [{ prefix: "ToolResult" }],
        detail: { parentRunId: [runId] },
      },
      target: { kind: "webhook", url: `${receiver.origin}/envelope` },
    });
    await created({
      name: "this account",
      pattern: {
        account: [system.bus.account],
        "detail-type": ["ToolCallScheduled"],
        detail: { parentRunId: [runId] },
      },
      target: { kind: "webhook", url: `${receiver.origin}/this-account` },
    });
    await created({
      name: "another account",
      pattern: { account: ["999999999999"], detail: { parentRunId: [runId] } },
      target: { kind: "webhook", url: `${receiver.origin}/other-account` },
    });
    await call(runId);
    await expect.poll(() => forRun(receiver, runId).length, { timeout: 10_000 }).toBe(2);
    const paths = forRun(receiver, runId).map((request) => request.url.pathname);
    expect(paths.sort()).toEqual(["/envelope", "/this-account"]);
  });
});
