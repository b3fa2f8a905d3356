import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateEventBusCommand,
  DescribeRuleCommand,
  ListTargetsByRuleCommand,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { afterEach, describe, expect, it } from "vitest";
import {
  type EventBridgeServer,
  LocalEventBus,
  type LocalEventBusOptions,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { signedPost } from "./support/sigv4";

const BUS = "toolbus-durable";
const open: Array<{ bus: LocalEventBus; server: EventBridgeServer }> = [];
const dirs: string[] = [];

async function start(options: LocalEventBusOptions = {}) {
  const bus = new LocalEventBus({ delivery: { baseDelayMs: 1, maxDelayMs: 5 }, ...options });
  const server = await startEventBridgeServer(bus);
  open.push({ bus, server });
  return { bus, server, client: localEventBridgeClient(server) };
}

async function local(server: EventBridgeServer, operation: string, input: object) {
  const response = await signedPost(server, `ToolbusLocal.${operation}`, JSON.stringify(input));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

afterEach(async () => {
  for (const { bus, server } of open.splice(0)) {
    bus.close();
    await server.close();
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("the local bus's dead letters", () => {
  it("lists what a target never accepted and redrives it once the target is fixed, losing none", async () => {
    let broken = true;
    const accepted: number[] = [];
    const { bus, server, client } = await start();
    const arn = bus.registerFunction("flaky", (event) => {
      if (broken) throw new Error("target down");
      accepted.push((event as { detail: { n: number } }).detail.n);
    });
    await client.send(new CreateEventBusCommand({ Name: BUS }));
    await client.send(
      new PutRuleCommand({ Name: "mine", EventBusName: BUS, EventPattern: '{"source":["app"]}' }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: "mine",
        EventBusName: BUS,
        Targets: [{ Id: "t", Arn: arn, RetryPolicy: { MaximumRetryAttempts: 2 } }],
      }),
    );
    for (let n = 0; n < 5; n++) {
      await client.send(
        new PutEventsCommand({
          Entries: [{ EventBusName: BUS, Source: "app", DetailType: "x", Detail: `{"n":${n}}` }],
        }),
      );
    }
    await bus.drain();

    const listed = await local(server, "ListDeadLetters", { RuleName: "mine", Limit: 3 });
    expect(listed.status).toBe(200);
    expect(listed.body.DeadLetters).toHaveLength(3);
    expect(listed.body.NextToken).toEqual(expect.any(String));
    expect((listed.body.DeadLetters as Array<Record<string, unknown>>)[0]).toMatchObject({
      Id: expect.any(String),
      EventBusName: BUS,
      RuleName: "mine",
      TargetId: "t",
      Attempts: 3,
      Error: "target down",
    });

    broken = false;
    const redriven = await local(server, "RedriveDeadLetters", { RuleName: "mine" });
    expect(redriven.body).toEqual({ RedrivenCount: 5, Failed: [] });
    await bus.drain();
    expect(accepted.sort()).toEqual([0, 1, 2, 3, 4]);
    expect((await local(server, "ListDeadLetters", {})).body.DeadLetters).toEqual([]);

    const unknown = await local(server, "RedriveDeadLetters", { Ids: ["no-such-letter"] });
    expect(unknown.body).toEqual({
      RedrivenCount: 0,
      Failed: [{ Id: "no-such-letter", Message: "No dead letter has this id." }],
    });
    const typo = await local(server, "ListDeadLeters", {});
    expect(typo.status).toBe(400);
    expect(typo.body.__type).toBe("UnknownOperationException");
  });

  it("keeps dead letters and user rules in files, so a new bus over them has both", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-bus-"));
    dirs.push(dir);
    const files = {
      rulesFile: join(dir, "rules.json"),
      deadLettersFile: join(dir, "dead-letters.json"),
    };
    const first = await start(files);
    const ghost = first.bus.functionArn("never-registered");
    await first.client.send(new CreateEventBusCommand({ Name: BUS }));
    await first.client.send(
      new PutRuleCommand({ Name: "hook", EventBusName: BUS, EventPattern: '{"source":["app"]}' }),
    );
    await first.client.send(
      new PutTargetsCommand({
        Rule: "hook",
        EventBusName: BUS,
        Targets: [
          { Id: "web", Arn: "http://127.0.0.1:9/hook", RetryPolicy: { MaximumRetryAttempts: 0 } },
        ],
      }),
    );
    await first.client.send(
      new PutRuleCommand({ Name: "orphan", EventBusName: BUS, EventPattern: '{"source":["x"]}' }),
    );
    await first.client.send(
      new PutTargetsCommand({
        Rule: "orphan",
        EventBusName: BUS,
        Targets: [{ Id: "f", Arn: ghost }],
      }),
    );
    await first.client.send(
      new PutEventsCommand({
        Entries: [{ EventBusName: BUS, Source: "app", DetailType: "x", Detail: "{}" }],
      }),
    );
    await first.bus.drain();
    expect(first.bus.deadLetters()).toHaveLength(1);

    const second = await start(files);
    const rule = await second.client.send(
      new DescribeRuleCommand({ Name: "hook", EventBusName: BUS }),
    );
    expect(rule.EventPattern).toBe('{"source":["app"]}');
    const targets = await second.client.send(
      new ListTargetsByRuleCommand({ Rule: "hook", EventBusName: BUS }),
    );
    expect(targets.Targets).toEqual([
      { Id: "web", Arn: "http://127.0.0.1:9/hook", RetryPolicy: { MaximumRetryAttempts: 0 } },
    ]);
    expect(second.bus.deadLetters()).toMatchObject([{ ruleName: "hook", targetId: "web" }]);
    // A rule whose only target is a function nobody registered again delivers nowhere.
    expect(second.bus.dropRulesWithoutHandlers()).toEqual(["orphan"]);
    const third = await start(files);
    await expect(
      third.client.send(new DescribeRuleCommand({ Name: "orphan", EventBusName: BUS })),
    ).rejects.toMatchObject({ name: "ResourceNotFoundException" });
  });
});
