import {
  DeleteRuleCommand,
  DescribeRuleCommand,
  DisableRuleCommand,
  EnableRuleCommand,
  ListTargetsByRuleCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
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
 * The subscriptions rule, on only while a subscription exists: switched on by the API as a
 * subscription is made (or the create fails), and off only by the sweeper's reconcile. Real DynamoDB Local, the
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
  // Deleting leaves the rule on: the next test starts from it off, as the sweeper leaves it.
  await sweep();
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

  it("stays on once the last subscription is deleted, until the sweeper's reconcile switches it off", async () => {
    const first = await subscribe(system.runId(), "first");
    const second = await subscribe(system.runId(), "second");
    await remove(first);
    expect(await ruleState()).toBe("ENABLED");
    await remove(second);
    // The API never switches it off: a fan-out per event until the next sweep, none delivered.
    expect(await ruleState()).toBe("ENABLED");
    const runId = system.runId();
    let before = fanOuts;
    await call(runId);
    expect(fanOuts - before).toBe(2);
    expect(delivered(runId)).toBe(0);

    expect(await sweep()).toMatchObject({ deliveryRule: "disabled" });
    expect(await ruleState()).toBe("DISABLED");
    before = fanOuts;
    await call(system.runId());
    expect(fanOuts).toBe(before);
  });

  it("ends on when a subscription is made while the sweeper switches it off", async () => {
    for (let round = 0; round < 5; round++) {
      // The last subscription deleted: the rule is on, and the sweep will find none.
      await remove(await subscribe(system.runId(), "leaving"));
      expect(await ruleState(), `round ${round}`).toBe("ENABLED");
      const runId = system.runId();
      const [staying] = await Promise.all([subscribe(runId, "staying"), sweep()]);
      expect(await ruleState(), `round ${round}`).toBe("ENABLED");
      await call(runId);
      await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
      if (staying) await remove(staying);
      expect(await sweep()).toMatchObject({ deliveryRule: "disabled" });
      expect(await ruleState()).toBe("DISABLED");
    }
  });

  it("is switched on again when a subscription appears after the check that let it go off", async () => {
    const store = subscriptionStore();
    const runId = system.runId();
    // On with none left, as a delete leaves it.
    await setRule("ENABLED");
    let made: Promise<string> | undefined;
    // The reconcile's check finds none; a subscription is then made (the API's enable is a
    // no-op, the rule being on) before the rule is switched off: the check after the switch
    // finds it, and the rule goes on again.
    const racing = {
      any: async () => {
        const found = await store.any();
        made ??= subscribe(runId);
        await made;
        return found;
      },
    };
    expect(await deliveryRule(racing).reconcile()).toBe("kept");
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

  it("refuses a subscription with a 503 while the rule cannot be switched on, and keeps none", async () => {
    const client = eventBridge();
    // EnableRule fails as on AWS when the rule is gone: taken off the bus, and put back after.
    const { EventPattern } = await client.send(new DescribeRuleCommand(ruleRef()));
    const { Targets = [] } = await client.send(
      new ListTargetsByRuleCommand({ Rule: SUBSCRIPTIONS_RULE, EventBusName: system.busName }),
    );
    await client.send(
      new RemoveTargetsCommand({
        Rule: SUBSCRIPTIONS_RULE,
        EventBusName: system.busName,
        Ids: Targets.flatMap((target) => (target.Id ? [target.Id] : [])),
      }),
    );
    await client.send(new DeleteRuleCommand(ruleRef()));
    try {
      const response = await system.request("/v1/subscriptions", {
        method: "POST",
        json: {
          name: "while the rule is gone",
          pattern: { source: ["toolbus"] },
          target: { kind: "webhook", url: `${receiver.origin}/refused` },
        },
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({
        error: {
          code: "unavailable",
          message:
            "Events cannot be routed to subscriptions now, so the subscription was not made. Retry later.",
        },
      });
      expect(await listed()).toEqual([]);
      expect(await subscriptionStore().any()).toBe(false);
    } finally {
      await client.send(new PutRuleCommand({ ...ruleRef(), EventPattern, State: "DISABLED" }));
      await client.send(
        new PutTargetsCommand({ Rule: SUBSCRIPTIONS_RULE, EventBusName: system.busName, Targets }),
      );
      client.destroy();
    }
    // The rule back, a retry is answered and delivered.
    const runId = system.runId();
    await subscribe(runId);
    expect(await ruleState()).toBe("ENABLED");
    await call(runId);
    await expect.poll(() => delivered(runId), { timeout: 10_000 }).toBe(2);
  });

  it("logs a subscription it could neither switch the rule on for nor withdraw, and still fails", async () => {
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
    // The withdrawal fails for real: its table does not exist.
    const elsewhere = new DynamoSubscriptionStore({
      client: createDocumentClient(dynamodb),
      tableName: "no-such-table",
    });
    const failed = unswitchable.subscribed(async () => {
      await elsewhere.remove("sub_gone");
    });
    await expect(failed).rejects.toMatchObject({ status: 503, code: "unavailable" });
    expect(lines).toEqual([
      expect.objectContaining({
        level: "ERROR",
        message:
          "the subscriptions rule could not be enabled, nor the subscription withdrawn: the sweeper will enable the rule",
      }),
    ]);
  });
});
