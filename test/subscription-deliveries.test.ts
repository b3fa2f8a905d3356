import { parseStageConfig, type StageConfig } from "@toolbus/core";
import { createHttpClient } from "@toolbus/core/outbound";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SubscriptionFanOut as SubscriptionDispatcher,
  type SubscriptionFanOutDeps,
} from "../packages/core/src/app/subscriptions/fan-out";
import { SubscriptionService } from "../packages/core/src/app/subscriptions/service";
import { subscriptionHandlers } from "../packages/core/src/runtime/subscriptions";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import {
  DynamoDeliveryStore,
  DynamoSubscriptionStore,
} from "../packages/core/src/store/dynamodb/subscriptions";
import { targetSender } from "../packages/core/src/subscriptions/targets";
import type { Principal } from "../packages/wire/src/model/call";
import { webhookIdOf } from "../packages/wire/src/webhooks/signature";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * The retry schedule, dead letters, redrive and auto-pause, driven by a clock the test moves:
 * real DynamoDB Local, real receivers on loopback, the real signer and outbound client.
 */
const client = testDynamoDbClient();
let table: TestTable;
let receiver: Upstream;
/** What the receiver answers next: a status, or [status, headers]. */
let answers: Array<number | [number, Record<string, string>]> = [];
/** Paths the receiver answers 503 whatever `answers` holds. */
const down = new Set<string>();
let clock = Date.parse("2026-11-24T12:00:00.000Z");
const now = () => new Date(clock);
const owner: Principal = { id: "key-owner", role: "member" };

/**
 * The API's service and a fan-out over the test's table. The fan-out has a DynamoDB client of
 * its own, whose requests are listed in `requests` (by command name); its delivery store's
 * table is `deliveryOptions.tableName`, which a test may point at a table that does not exist.
 */
function system(config: StageConfig) {
  const options = { client: createDocumentClient(client), tableName: table.tableName };
  const subscriptions = new DynamoSubscriptionStore(options);
  const deliveries = new DynamoDeliveryStore(options);
  const service = new SubscriptionService({ subscriptions, deliveries, config, now });
  const own = testDynamoDbClient();
  const requests: string[] = [];
  own.middlewareStack.add(
    (next, context) => async (args) => {
      requests.push(String(context.commandName));
      return next(args);
    },
    { step: "initialize" },
  );
  const deliveryOptions = { client: createDocumentClient(own), tableName: table.tableName };
  const deps: SubscriptionFanOutDeps = {
    subscriptions: new DynamoSubscriptionStore({ ...deliveryOptions }),
    deliveries: new DynamoDeliveryStore(deliveryOptions),
    config,
    now,
    send: targetSender({
      http: createHttpClient(config.outbound),
      eventBridge: () => {
        throw new Error("no bus targets here");
      },
      sqs: () => {
        throw new Error("no queue targets here");
      },
      now,
    }),
  };
  const dispatcher = new SubscriptionDispatcher(deps);
  return { service, dispatcher, deliveries, deps, deliveryOptions, requests };
}

/** The write requests among those made. */
const writes = (requests: readonly string[]) =>
  requests.filter((name) => /Put|Update|Delete|Write/.test(name));

const stage = (subscriptions: Record<string, unknown> = {}) =>
  parseStageConfig({ outbound: { allowHosts: ["127.0.0.1"] }, subscriptions });

let events = 0;
function event(runId: string) {
  events++;
  return {
    version: "0",
    id: `e-${events}`,
    source: "toolbus",
    "detail-type": "ToolResultReceived",
    time: now().toISOString(),
    detail: { eventKey: `${runId}:call-${events}:result`, parentRunId: runId, status: "succeeded" },
  };
}

beforeAll(async () => {
  table = await createToolbusTestTable(client, "deliveries");
  receiver = await startUpstream((request, response) => {
    const next = down.has(request.url.pathname) ? 503 : (answers.shift() ?? 204);
    const [status, headers] = Array.isArray(next) ? next : [next, {}];
    response.writeHead(status, headers).end(status >= 400 ? "nope" : "");
  });
});

afterAll(async () => {
  await receiver?.close();
  await table?.drop();
});

async function subscribed(service: SubscriptionService, runId: string) {
  return service.create(owner, {
    name: runId,
    pattern: { detail: { parentRunId: [runId] } },
    target: { kind: "webhook", url: `${receiver.origin}/${runId}` },
  });
}

const received = (runId: string) =>
  receiver.requests.filter((request) => request.url.pathname === `/${runId}`);

/** Moves the clock past the next attempt and runs the retry driver once. */
async function later(dispatcher: SubscriptionDispatcher, ms: number) {
  clock += ms;
  await dispatcher.retryDue();
}

describe("webhook deliveries", () => {
  it("retries a receiver that is down until it is back, then delivers every event once", async () => {
    const { service, dispatcher } = system(stage());
    const { subscription } = await subscribed(service, "run-down");
    answers = [500, 500, 502, 500, 500, 500];
    for (let i = 0; i < 3; i++) await dispatcher.dispatch(event("run-down"));
    // Each event's first attempt failed; a retry run gives the receiver one more try, not three.
    await later(dispatcher, 10_000);
    expect(received("run-down")).toHaveLength(4);
    // Back up: every event arrives, each under its own webhook-id, none twice.
    for (let round = 0; round < 6; round++) await later(dispatcher, 3600_000);
    const ids = received("run-down").map((request) => request.headers["webhook-id"]);
    const delivered = received("run-down").slice(6);
    expect(delivered).toHaveLength(3);
    expect(new Set(delivered.map((request) => request.headers["webhook-id"])).size).toBe(3);
    expect(new Set(ids).size).toBe(3);
    const failures = await service.failures(owner, subscription.id, { limit: 10 });
    expect(failures.deliveries).toEqual([]);
    expect((await service.get(owner, subscription.id)).failureStreak).toBe(0);
  });

  it("gives up when the retry window closes, lists the dead letter, and redrives it", async () => {
    const { service, dispatcher } = system(stage({ retryWindowHours: 1 }));
    const { subscription } = await subscribed(service, "run-dead");
    answers = Array(50).fill(503);
    await dispatcher.dispatch(event("run-dead"));
    for (let round = 0; round < 12; round++) await later(dispatcher, 10 * 60_000);
    const attempts = received("run-dead").length;
    expect(attempts).toBeGreaterThan(1);
    const { deliveries } = await service.failures(owner, subscription.id, { limit: 10 });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      status: "dead",
      attempts,
      lastError: { status: 503, message: expect.stringContaining("nope") },
    });
    // Dead means no more attempts, however long we wait.
    await later(dispatcher, 24 * 3600_000);
    expect(received("run-dead")).toHaveLength(attempts);

    answers = [];
    expect(await service.redrive(owner, subscription.id)).toBe(1);
    await later(dispatcher, 1);
    expect(received("run-dead")).toHaveLength(attempts + 1);
    expect(received("run-dead").at(-1)?.headers["webhook-id"]).toBe(
      webhookIdOf(deliveries[0]?.eventKey ?? ""),
    );
    expect((await service.failures(owner, subscription.id, { limit: 10 })).deliveries).toEqual([]);
  });

  it("pauses a subscription whose attempts keep failing, says so, and loses none of its events", async () => {
    const { service, dispatcher } = system(stage({ pauseAfterFailures: 3 }));
    const { subscription } = await subscribed(service, "run-pause");
    answers = Array(10).fill(500);
    await dispatcher.dispatch(event("run-pause"));
    await later(dispatcher, 3600_000);
    await later(dispatcher, 3600_000);
    const paused = await service.get(owner, subscription.id);
    expect(paused).toMatchObject({ status: "paused", pausedBecause: "failing", failureStreak: 3 });
    // Paused as failing: nothing is sent, but new events are queued, not lost.
    const before = received("run-pause").length;
    dispatcher.invalidate();
    await dispatcher.dispatch(event("run-pause"));
    await later(dispatcher, 3600_000);
    expect(received("run-pause")).toHaveLength(before);
    // Resumed: the pending delivery and the one queued while paused both go out.
    answers = [];
    await service.resume(owner, subscription.id);
    await later(dispatcher, 3600_000);
    expect(received("run-pause")).toHaveLength(before + 2);
  });

  it("stops at once for a receiver that says it is gone (410)", async () => {
    const { service, dispatcher } = system(stage());
    const { subscription } = await subscribed(service, "run-gone");
    answers = [410];
    await dispatcher.dispatch(event("run-gone"));
    expect(await service.get(owner, subscription.id)).toMatchObject({
      status: "paused",
      pausedBecause: "failing",
    });
    const { deliveries } = await service.failures(owner, subscription.id, { limit: 10 });
    expect(deliveries.map((delivery) => delivery.lastError?.status)).toEqual([410]);
  });

  it("sends an event handed twice to one fan-out once, and under one webhook-id by any other", async () => {
    const { service, dispatcher } = system(stage());
    await subscribed(service, "run-twice");
    answers = [];
    const twice = event("run-twice");
    await dispatcher.dispatch(twice);
    await dispatcher.dispatch(twice);
    expect(received("run-twice")).toHaveLength(1);
    // Another instance keeps no record of it: at least once, and the receiver dedupes.
    await system(stage()).dispatcher.dispatch(twice);
    const ids = received("run-twice").map((request) => request.headers["webhook-id"]);
    expect(ids).toEqual([webhookIdOf(twice.detail.eventKey), webhookIdOf(twice.detail.eventKey)]);
  });

  it("signs with both secrets while a rotated one is kept, then with the new one alone", async () => {
    clock = Date.now();
    const { service, dispatcher } = system(stage());
    const { subscription, secret: old } = await subscribed(service, "run-rotate");
    const { secret: fresh } = await service.rotateSecret(owner, subscription.id);
    expect(fresh).not.toBe(old);
    answers = [];
    /**
     * Which secret made each signature of the last delivery, in header order: each is
     * recomputed with the Standard Webhooks library (not our signer) from the request's own id,
     * timestamp and body. The library's verify would refuse a timestamp from the test's clock.
     */
    const signers = () => {
      const request = received("run-rotate").at(-1);
      const id = String(request?.headers["webhook-id"]);
      const timestamp = new Date(Number(request?.headers["webhook-timestamp"]) * 1000);
      const body = request?.body ?? "";
      const made = new Map(
        Object.entries({ old, fresh }).map(([name, secret]) => [
          new Webhook(secret).sign(id, timestamp, body),
          name,
        ]),
      );
      const header = String(request?.headers["webhook-signature"]);
      return header.split(" ").map((signature) => made.get(signature) ?? `unknown ${signature}`);
    };
    await dispatcher.dispatch(event("run-rotate"));
    // While the rotated secret is kept, each signs: the new one first.
    expect(signers()).toEqual(["fresh", "old"]);
    clock = Date.now() + 25 * 3600_000;
    dispatcher.invalidate();
    await dispatcher.dispatch(event("run-rotate"));
    expect(signers()).toEqual(["fresh"]);
  });

  it("refuses a key more subscriptions than the stage allows it", async () => {
    const { service } = system(stage({ maxPerOwner: 2 }));
    const capped: Principal = { id: "key-capped", role: "member" };
    const request = (name: string) => ({
      name,
      // Matches no event of the other tests, which share this table and receiver.
      pattern: { detail: { parentRunId: ["run-capped"] } },
      target: { kind: "webhook" as const, url: `${receiver.origin}/capped` },
    });
    await service.create(capped, request("one"));
    await service.create(capped, request("two"));
    await expect(service.create(capped, request("three"))).rejects.toThrow(/at most 2/);
    // Another key is not held to this one's count.
    const other: Principal = { id: "key-other", role: "member" };
    await expect(service.create(other, request("other"))).resolves.toMatchObject({
      subscription: { name: "other" },
    });
  });

  it("sends a due delivery once when two retry runs race for it", async () => {
    const { service, dispatcher } = system(stage());
    await subscribed(service, "run-race");
    answers = [500];
    await dispatcher.dispatch(event("run-race"));
    answers = [];
    clock += 3600_000;
    const other = system(stage()).dispatcher;
    await Promise.all([dispatcher.retryDue(), other.retryDue(), dispatcher.retryDue()]);
    // The first attempt failed; of the three racing runs, one claimed and sent the retry.
    expect(received("run-race")).toHaveLength(2);
  });

  it("gives a failing receiver one attempt per retry run, not the run", async () => {
    const { service, dispatcher } = system(stage());
    await subscribed(service, "run-down-many");
    await subscribed(service, "run-healthy");
    answers = Array(5).fill(500);
    for (let i = 0; i < 5; i++) await dispatcher.dispatch(event("run-down-many"));
    answers = [500];
    await dispatcher.dispatch(event("run-healthy"));
    expect(received("run-down-many")).toHaveLength(5);
    expect(received("run-healthy")).toHaveLength(1);
    // Everything is due; the down receiver still fails.
    answers = Array(10).fill(500);
    clock += 3600_000;
    const healthy = () => received("run-healthy").length;
    const down = () => received("run-down-many").length;
    // The healthy one is answered 204 once the down one has had its single attempt.
    const before = down();
    await dispatcher.retryDue();
    expect(down() - before).toBe(1);
    expect(healthy()).toBe(2);
  });
});

describe("attempt-first deliveries", () => {
  it("writes nothing for an event whose first attempt is delivered", async () => {
    const { service, dispatcher, deliveries, requests } = system(stage());
    const { subscription, secret } = await subscribed(service, "run-light");
    answers = [];
    const light = event("run-light");
    await dispatcher.dispatch(light);
    // It read the subscriptions (index, then the matched one as it is now), and wrote nothing.
    expect(requests).toContain("GetItemCommand");
    expect(writes(requests)).toEqual([]);
    expect(await deliveries.get(subscription.id, light.detail.eventKey)).toBeUndefined();
    // Sent as before: signed with the subscription's secret, under the event's webhook-id.
    const [request] = received("run-light");
    const id = String(request?.headers["webhook-id"]);
    expect(id).toBe(webhookIdOf(light.detail.eventKey));
    const timestamp = new Date(Number(request?.headers["webhook-timestamp"]) * 1000);
    expect(request?.headers["webhook-signature"]).toBe(
      new Webhook(secret).sign(id, timestamp, request?.body ?? ""),
    );
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      type: "ToolResultReceived",
      data: { eventKey: light.detail.eventKey },
    });
  });

  it("makes a failed first attempt a pending retry, which the retry driver delivers", async () => {
    const { service, dispatcher, deliveries, requests } = system(stage());
    const { subscription } = await subscribed(service, "run-retried");
    answers = [503];
    const retried = event("run-retried");
    await dispatcher.dispatch(retried);
    // The retry item and the failure streak: the bookkeeping a failure needs.
    expect(writes(requests)).toEqual(["PutItemCommand", "UpdateItemCommand"]);
    const key = retried.detail.eventKey;
    expect(await deliveries.get(subscription.id, key)).toMatchObject({
      status: "pending",
      attempts: 1,
      lastError: { status: 503 },
    });
    const due = await deliveries.listDue(new Date(clock + 3600_000).toISOString());
    expect(due.map((delivery) => delivery.eventKey)).toContain(key);
    expect((await service.get(owner, subscription.id)).failureStreak).toBe(1);

    answers = [];
    await later(dispatcher, 10_000);
    const ids = received("run-retried").map((request) => request.headers["webhook-id"]);
    expect(ids).toEqual([webhookIdOf(key), webhookIdOf(key)]);
    expect(await deliveries.get(subscription.id, key)).toMatchObject({
      status: "delivered",
      attempts: 2,
    });
    expect((await service.get(owner, subscription.id)).failureStreak).toBe(0);
    // With the streak back at zero, the next delivered event writes nothing.
    requests.length = 0;
    await dispatcher.dispatch(event("run-retried"));
    expect(received("run-retried")).toHaveLength(3);
    expect(writes(requests)).toEqual([]);
  });

  it("throws when a failed first attempt cannot be queued, and delivers the event handed over again", async () => {
    const { service, deps, deliveries, deliveryOptions } = system(stage());
    const target = (path: string) => ({
      kind: "webhook" as const,
      url: `${receiver.origin}${path}`,
    });
    const pattern = { detail: { parentRunId: ["run-unqueued"] } };
    const failing = await service.create(owner, {
      name: "down",
      pattern,
      target: target("/unqueued-down"),
    });
    await service.create(owner, { name: "up", pattern, target: target("/unqueued-up") });
    const sent = (path: string) =>
      receiver.requests.filter((request) => request.url.pathname === path);
    // The deployed handler, whose throw has the bus (Lambda's retries) hand the event over again.
    const handlers = subscriptionHandlers(() => deps);
    down.add("/unqueued-down");
    // The store refuses every write: the table is not there.
    deliveryOptions.tableName = `${table.tableName}-missing`;
    const lost = event("run-unqueued");
    const key = lost.detail.eventKey;
    await expect(handlers.dispatch(lost)).rejects.toThrow(
      /1 of 2 deliveries .* could be neither sent nor queued/,
    );
    expect(sent("/unqueued-down")).toHaveLength(1);
    expect(sent("/unqueued-up")).toHaveLength(1);
    expect(await deliveries.get(failing.subscription.id, key)).toBeUndefined();

    // Handed over again with the store back: the failed one is attempted again and queued; the
    // delivered one is not sent again by this instance.
    deliveryOptions.tableName = table.tableName;
    await handlers.dispatch(lost);
    expect(sent("/unqueued-down")).toHaveLength(2);
    expect(sent("/unqueued-up")).toHaveLength(1);
    expect(await deliveries.get(failing.subscription.id, key)).toMatchObject({
      status: "pending",
      attempts: 1,
    });
    down.delete("/unqueued-down");
    clock += 10_000;
    await handlers.retryDue();
    expect(sent("/unqueued-down")).toHaveLength(3);
    expect(sent("/unqueued-down").at(-1)?.headers["webhook-id"]).toBe(webhookIdOf(key));
    expect(await deliveries.get(failing.subscription.id, key)).toMatchObject({
      status: "delivered",
    });
  });

  it("queues, due at once, the matches it has no time left to attempt", async () => {
    const { service, dispatcher, deliveries } = system(stage());
    const { subscription } = await subscribed(service, "run-late");
    answers = [];
    const late = event("run-late");
    await dispatcher.dispatch(late, 0);
    expect(received("run-late")).toEqual([]);
    expect(await deliveries.get(subscription.id, late.detail.eventKey)).toMatchObject({
      status: "pending",
      attempts: 0,
      nextAttemptAt: now().toISOString(),
    });
    await later(dispatcher, 1);
    expect(received("run-late")).toHaveLength(1);
  });
});
