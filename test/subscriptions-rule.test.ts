import {
  DescribeRuleCommand,
  DisableRuleCommand,
  EnableRuleCommand,
} from "@aws-sdk/client-eventbridge";
import { createSweeper, SUBSCRIPTIONS_HANDLER, SUBSCRIPTIONS_RULE } from "@toolbus/core";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { localFunctionName } from "@toolbus/local";
import { localEventBridgeClient } from "@toolbus/local/bus";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeliveryRule } from "../packages/core/src/app/subscriptions/delivery-rule";
import { eventBridgeRuleSwitch } from "../packages/core/src/events/rule-switch";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import { DynamoSubscriptionStore } from "../packages/core/src/store/dynamodb/subscriptions";
import { testDynamoDbClient } from "./support/dynamodb";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * The subscriptions rule, on only while a subscription exists: switched by the API as
 * subscriptions are made and removed, and reconciled by the sweeper. Real DynamoDB Local, the
 * real local bus (which skips a disabled rule as EventBridge does) and a real receiver.
 */
let system: TestToolbus;
let receiver: Upstream;
/** Times the bus handed an event to the subscriptions fan-out. */
let fanOuts = 0;
const dynamodb = testDynamoDbClient();

beforeAll(async () => {
  receiver = await startUpstream((_request, response) => {
    response.writeHead(204).end();
  });
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  // The fan-out's function on the bus, counted on its way in: the rule's only target.
  const fanOut = system.toolbus.handlers[SUBSCRIPTIONS_HANDLER];
  if (!fanOut) throw new Error("no subscriptions handler");
  system.bus.registerFunction(localFunctionName(SUBSCRIPTIONS_HANDLER), (event) => {
    fanOuts++;
    return fanOut(event);
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  dynamodb.destroy();
});

afterEach(async () => {
  for (const { id } of await listed()) await remove(id);
  await system.settle();
});

const eventBridge = () => localEventBridgeClient({ bus: system.bus });
const ruleRef = () => ({ Name: SUBSCRIPTIONS_RULE, EventBusName: system.busName });

async function ruleState(): Promise<string | undefined> {
  const client = eventBridge();
  try {
    return (await client.send(new DescribeRuleCommand(ruleRef()))).State;
  } finally {
    client.destroy();
  }
}

async function setRule(state: "ENABLED" | "DISABLED"): Promise<void> {
  const client = eventBridge();
  try {
    await client.send(
      state === "ENABLED" ? new EnableRuleCommand(ruleRef()) : new DisableRuleCommand(ruleRef()),
    );
  } finally {
    client.destroy();
  }
}

const subscriptionStore = () =>
  new DynamoSubscriptionStore({
    client: createDocumentClient(dynamodb),
    tableName: system.tableName,
  });

/** The rule as the API and the sweeper switch it, over the test's table and bus. */
function deliveryRule(subscriptions: Pick<DynamoSubscriptionStore, "any"> = subscriptionStore()) {
  const client = eventBridge();
  return new DeliveryRule({
    subscriptions,
    rule: eventBridgeRuleSwitch({ client, busName: system.busName, ruleName: SUBSCRIPTIONS_RULE }),
  });
}

/** The sweeper's run, as its function runs it every minute. */
const sweep = () =>
  createSweeper(() => ({
    calls: system.toolbus.stores.calls,
    bus: system.toolbus.publisher,
    deliveryRule: deliveryRule(),
  }))();

async function subscribe(runId: string, path = "hook"): Promise<string> {
  const response = await system.request("/v1/subscriptions", {
    method: "POST",
    json: {
      name: `events of ${runId}`,
      pattern: { detail: { parentRunId: [runId] } },
      target: { kind: "webhook", url: `${receiver.origin}/${path}` },
    },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { subscription: { id: string } }).subscription.id;
}

async function remove(id: string): Promise<void> {
  const response = await system.request(`/v1/subscriptions/${id}`, { method: "DELETE" });
  expect(response.status).toBe(204);
}

async function listed(): Promise<Array<{ id: string }>> {
  const response = await system.request("/v1/subscriptions");
  return ((await response.json()) as { subscriptions: Array<{ id: string }> }).subscriptions;
}

/** One call, its two events published and every delivery of them finished. */
async function call(runId: string): Promise<void> {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: "Short words here." }, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

const delivered = (runId: string) =>
  receiver.requests.filter((request) => request.body.includes(runId)).length;

describe("the subscriptions rule", () => {
  it("is off on a stage without subscriptions: a call's events invoke no fan-out", async () => {
    expect(await ruleState()).toBe("DISABLED");
    const before = fanOuts;
    await call(system.runId());
    expect(fanOuts).toBe(before);
  });

  it("is on once the first subscription is answered, and an event published then is delivered", async () => {
    const runId = system.runId();
    await subscribe(runId);
    expect(await ruleState()).toBe("ENABLED");
    const before = fanOuts;
    await call(runId);
    // Scheduled and result: each handed to the fan-out, each delivered.
    expect(fanOuts - before).toBe(2);
    await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
  });

  it("stays on while one subscription remains, and is off once the last is deleted", async () => {
    const first = await subscribe(system.runId(), "first");
    const second = await subscribe(system.runId(), "second");
    await remove(first);
    expect(await ruleState()).toBe("ENABLED");
    await remove(second);
    expect(await ruleState()).toBe("DISABLED");
    const before = fanOuts;
    await call(system.runId());
    expect(fanOuts).toBe(before);
  });

  it("ends on when a subscription is made while the last other one is deleted", async () => {
    for (let round = 0; round < 5; round++) {
      const leaving = await subscribe(system.runId(), "leaving");
      const runId = system.runId();
      const [staying] = await Promise.all([subscribe(runId, "staying"), remove(leaving)]);
      expect(await ruleState(), `round ${round}`).toBe("ENABLED");
      await call(runId);
      await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
      if (staying) await remove(staying);
      expect(await ruleState()).toBe("DISABLED");
    }
  });

  it("is switched on again when a subscription appears after the check that let it go off", async () => {
    const store = subscriptionStore();
    const runId = system.runId();
    let made: Promise<string> | undefined;
    // The first check finds none; a subscription is then made (the API switches the rule on)
    // before the rule is switched off: the check after the switch finds it.
    const racing = {
      any: async () => {
        const found = await store.any();
        made ??= subscribe(runId);
        await made;
        return found;
      },
    };
    await deliveryRule(racing).unsubscribed();
    expect(await ruleState()).toBe("ENABLED");
    await call(runId);
    await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
  });

  it("is mended by the sweeper's reconcile, whichever way it went wrong", async () => {
    // On with nothing to deliver (a fresh deploy, a disable that failed): switched off.
    await setRule("ENABLED");
    expect(await sweep()).toMatchObject({ deliveryRule: "disabled" });
    expect(await ruleState()).toBe("DISABLED");
    expect(await sweep()).toMatchObject({ deliveryRule: "kept" });

    // Off while a subscription exists (an enable that failed): switched on, and delivering.
    const runId = system.runId();
    await subscribe(runId);
    await setRule("DISABLED");
    expect(await sweep()).toMatchObject({ deliveryRule: "enabled" });
    expect(await ruleState()).toBe("ENABLED");
    await call(runId);
    await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
    expect(await sweep()).toMatchObject({ deliveryRule: "kept" });
  });

  it("answers a subscription made while the rule cannot be switched, logging it for the sweeper", async () => {
    const lines: LogRecord[] = [];
    const unswitchable = new DeliveryRule({
      subscriptions: subscriptionStore(),
      rule: eventBridgeRuleSwitch({
        client: eventBridge(),
        busName: system.busName,
        ruleName: "no-such-rule",
      }),
      log: createLogger({ service: "test", sink: (record) => lines.push(record) }),
    });
    await expect(unswitchable.subscribed()).resolves.toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({
        level: "ERROR",
        message: "the subscriptions rule could not be enabled: the sweeper will",
      }),
    ]);
  });
});
