import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateEventBusCommand,
  DeleteEventBusCommand,
  DeleteRuleCommand,
  DescribeEventBusCommand,
  DescribeRuleCommand,
  DisableRuleCommand,
  EnableRuleCommand,
  type EventBridgeClient,
  EventBridgeServiceException,
  InvalidEventPatternException,
  LimitExceededException,
  ListEventBusesCommand,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  PutEventsCommand,
  type PutEventsRequestEntry,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
  ResourceAlreadyExistsException,
  ResourceNotFoundException,
  TestEventPatternCommand,
} from "@aws-sdk/client-eventbridge";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type EventBridgeServer,
  LocalEventBus,
  type LocalEventBusOptions,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { JSON_11, signedPost } from "./support/sigv4";

type Transport = "http" | "in-process";

const BUS = "toolbus-test";
const entry = (detail: object, overrides: Partial<PutEventsRequestEntry> = {}) => ({
  EventBusName: BUS,
  Source: "toolbus",
  DetailType: "ToolCallScheduled",
  Detail: JSON.stringify(detail),
  ...overrides,
});

describe.each<Transport>(["http", "in-process"])("the local event bus (%s)", (transport) => {
  let bus: LocalEventBus;
  let server: EventBridgeServer | undefined;
  let client: EventBridgeClient;
  let received: unknown[];

  async function open(options: LocalEventBusOptions = {}) {
    bus = new LocalEventBus({ delivery: { baseDelayMs: 1, maxDelayMs: 5 }, ...options });
    if (transport === "http") {
      server = await startEventBridgeServer(bus);
      client = localEventBridgeClient(server);
    } else {
      client = localEventBridgeClient({ bus });
    }
    received = [];
    await client.send(new CreateEventBusCommand({ Name: BUS }));
  }

  async function ruleTo(target: string, pattern: object = { source: ["toolbus"] }, name = "r1") {
    await client.send(
      new PutRuleCommand({ Name: name, EventBusName: BUS, EventPattern: JSON.stringify(pattern) }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: name,
        EventBusName: BUS,
        Targets: [{ Id: "t1", Arn: target }],
      }),
    );
  }

  const collector = () => bus.registerFunction("collector", (event) => void received.push(event));

  beforeEach(() => open());
  afterEach(async () => {
    client.destroy();
    bus.close();
    await server?.close();
    server = undefined;
  });

  it("delivers a matching event to an in-process function in EventBridge's envelope", async () => {
    await ruleTo(collector());
    const time = new Date("2026-11-21T10:00:00.123Z");
    const out = await client.send(
      new PutEventsCommand({
        Entries: [entry({ toolId: "web_search" }, { Time: time, Resources: ["arn:x"] })],
      }),
    );
    await bus.drain();

    expect(out.FailedEntryCount).toBe(0);
    expect(received).toEqual([
      {
        version: "0",
        id: out.Entries?.[0]?.EventId,
        "detail-type": "ToolCallScheduled",
        source: "toolbus",
        account: "000000000000",
        time: "2026-11-21T10:00:00Z",
        region: "us-east-1",
        resources: ["arn:x"],
        detail: { toolId: "web_search" },
      },
    ]);
  });

  it("delivers only to rules whose pattern matches", async () => {
    await ruleTo(collector(), { detail: { toolId: ["static_links"] } });
    await client.send(
      new PutEventsCommand({
        Entries: [entry({ toolId: "web_search" }), entry({ toolId: "static_links" })],
      }),
    );
    await bus.drain();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ detail: { toolId: "static_links" } });
  });

  it("reports bad entries per entry in FailedEntryCount and still delivers the good ones", async () => {
    await ruleTo(collector());
    const oversize = entry({ blob: "x".repeat(256 * 1024) });
    const out = await client.send(
      new PutEventsCommand({
        Entries: [
          entry({ ok: 1 }),
          { ...entry({ ok: 2 }), Source: undefined },
          { ...entry({}), Detail: "[1,2]" },
          oversize,
          entry({ ok: 3 }, { EventBusName: "no-such-bus" }),
        ],
      }),
    );
    await bus.drain();

    expect(out.FailedEntryCount).toBe(4);
    expect(out.Entries?.map((e) => e.ErrorCode ?? "ok")).toEqual([
      "ok",
      "InvalidArgument",
      "MalformedDetail",
      "InvalidArgument",
      "ResourceNotFoundException",
    ]);
    expect(out.Entries?.[1]?.ErrorMessage).toMatch(/Source is a required argument/);
    expect(out.Entries?.[3]?.ErrorMessage).toMatch(/over the limit of 262144 bytes/);
    expect(received).toHaveLength(1);
  });

  it("rejects more than ten entries in one PutEvents with a ValidationException", async () => {
    const entries = Array.from({ length: 11 }, (_, i) => entry({ i }));
    const error = await client.send(new PutEventsCommand({ Entries: entries })).catch((e) => e);
    expect(error).toBeInstanceOf(EventBridgeServiceException);
    expect(error.name).toBe("ValidationException");
    expect(error.message).toMatch(/less than or equal to 10/);
  });

  it("answers unknown buses and rules with ResourceNotFoundException", async () => {
    const onBus = client.send(
      new PutRuleCommand({ Name: "r", EventBusName: "missing", EventPattern: '{"source":["a"]}' }),
    );
    await expect(onBus).rejects.toBeInstanceOf(ResourceNotFoundException);
    const rule = client.send(new DescribeRuleCommand({ Name: "nope", EventBusName: BUS }));
    await expect(rule).rejects.toThrow(/Rule nope does not exist on EventBus toolbus-test/);
  });

  it("rejects an invalid pattern with InvalidEventPatternException", async () => {
    const put = client.send(
      new PutRuleCommand({ Name: "bad", EventBusName: BUS, EventPattern: '{"source":"toolbus"}' }),
    );
    await expect(put).rejects.toBeInstanceOf(InvalidEventPatternException);
    const described = client.send(new DescribeRuleCommand({ Name: "bad", EventBusName: BUS }));
    await expect(described).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it("requires a pattern or a valid schedule on PutRule", async () => {
    const none = await client
      .send(new PutRuleCommand({ Name: "x", EventBusName: BUS }))
      .catch((e) => e);
    expect(none.name).toBe("ValidationException");
    const badRate = client.send(
      new PutRuleCommand({ Name: "x", EventBusName: BUS, ScheduleExpression: "rate(5 minute)" }),
    );
    await expect(badRate).rejects.toThrow(/ScheduleExpression is not valid/);
  });

  it("limits targets per rule with LimitExceededException", async () => {
    await ruleTo(collector());
    const targets = Array.from({ length: 5 }, (_, i) => ({ Id: `extra${i}`, Arn: collector() }));
    const put = client.send(
      new PutTargetsCommand({ Rule: "r1", EventBusName: BUS, Targets: targets }),
    );
    await expect(put).rejects.toBeInstanceOf(LimitExceededException);
  });

  it("delivers nothing through a disabled rule, and resumes once it is enabled", async () => {
    await ruleTo(collector());
    await client.send(new DisableRuleCommand({ Name: "r1", EventBusName: BUS }));
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 })] }));
    await bus.drain();
    expect(received).toHaveLength(0);

    await client.send(new EnableRuleCommand({ Name: "r1", EventBusName: BUS }));
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 2 })] }));
    await bus.drain();
    expect(received).toMatchObject([{ detail: { n: 2 } }]);
    const rule = await client.send(new DescribeRuleCommand({ Name: "r1", EventBusName: BUS }));
    expect(rule.State).toBe("ENABLED");
  });

  it("routes by a rule's new pattern once PutRule replaces it, and by none once it is only a schedule", async () => {
    const target = collector();
    await ruleTo(target, { detail: { toolId: ["old"] } });
    await ruleTo(target, { detail: { toolId: ["new"] } });
    await client.send(
      new PutEventsCommand({ Entries: [entry({ toolId: "old" }), entry({ toolId: "new" })] }),
    );
    await bus.drain();
    expect(received).toMatchObject([{ detail: { toolId: "new" } }]);

    await client.send(
      new PutRuleCommand({ Name: "r1", EventBusName: BUS, ScheduleExpression: "rate(1 day)" }),
    );
    await client.send(new PutEventsCommand({ Entries: [entry({ toolId: "new" })] }));
    await bus.drain();
    expect(received).toHaveLength(1);
  });

  it("stops routing through a deleted rule, and routes through a new rule of the same name", async () => {
    const target = collector();
    await ruleTo(target, { detail: { n: [{ numeric: ["<", 10] }] } });
    await client.send(new RemoveTargetsCommand({ Rule: "r1", EventBusName: BUS, Ids: ["t1"] }));
    await client.send(new DeleteRuleCommand({ Name: "r1", EventBusName: BUS }));
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 })] }));
    await bus.drain();
    expect(received).toHaveLength(0);

    await ruleTo(target, { detail: { n: [{ numeric: [">=", 10] }] } });
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 }), entry({ n: 10 })] }));
    await bus.drain();
    expect(received).toMatchObject([{ detail: { n: 10 } }]);
  });

  it("delivers to exactly the rules that match among the bus's 300", async () => {
    const target = collector();
    for (let i = 0; i < 300; i++) {
      const pattern =
        i % 3 === 0
          ? { detail: { toolId: [`tool_${i}`] } }
          : i % 3 === 1
            ? { detail: { runId: [{ prefix: `run-${i}-` }] } }
            : { detail: { ms: [{ numeric: [">=", i, "<", i + 1] }] } };
      await client.send(
        new PutRuleCommand({
          Name: `r${i}`,
          EventBusName: BUS,
          EventPattern: JSON.stringify(pattern),
        }),
      );
      await client.send(
        new PutTargetsCommand({
          Rule: `r${i}`,
          EventBusName: BUS,
          Targets: [{ Id: "t", Arn: target, Input: JSON.stringify({ rule: i }) }],
        }),
      );
    }
    await client.send(
      new PutEventsCommand({
        Entries: [
          entry({ toolId: "tool_3", runId: "run-4-x", ms: 5.5 }),
          entry({ toolId: "none" }),
        ],
      }),
    );
    await bus.drain();
    expect(received).toHaveLength(3);
    expect(received).toEqual(expect.arrayContaining([{ rule: 3 }, { rule: 4 }, { rule: 5 }]));
  });

  it("retries a failing target and delivers once it recovers", async () => {
    let calls = 0;
    const flaky = bus.registerFunction("flaky", (event) => {
      calls++;
      if (calls < 3) throw new Error("cold start");
      received.push(event);
    });
    await ruleTo(flaky);
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 })] }));
    await bus.drain();
    expect(calls).toBe(3);
    expect(received).toHaveLength(1);
    expect(bus.deadLetters()).toHaveLength(0);
  });

  it("dead-letters an event after the target's retry policy is exhausted", async () => {
    let calls = 0;
    const broken = bus.registerFunction("broken", () => {
      calls++;
      return Promise.reject(new Error("upstream down"));
    });
    await client.send(
      new PutRuleCommand({ Name: "r1", EventBusName: BUS, EventPattern: '{"source":["toolbus"]}' }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: "r1",
        EventBusName: BUS,
        Targets: [
          {
            Id: "t1",
            Arn: broken,
            RetryPolicy: { MaximumRetryAttempts: 3 },
            DeadLetterConfig: { Arn: "arn:aws:sqs:us-east-1:000000000000:dlq" },
          },
        ],
      }),
    );
    const out = await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 })] }));
    await bus.drain();

    expect(calls).toBe(4);
    expect(bus.deadLetters()).toMatchObject([
      {
        eventId: out.Entries?.[0]?.EventId,
        ruleName: "r1",
        targetId: "t1",
        attempts: 4,
        error: "upstream down",
        deadLetterArn: "arn:aws:sqs:us-east-1:000000000000:dlq",
        input: { detail: { n: 1 } },
      },
    ]);
  });

  it("dead-letters events for a function that was never registered", async () => {
    await ruleTo(bus.functionArn("ghost"));
    await client.send(new PutEventsCommand({ Entries: [entry({ n: 1 })] }));
    await bus.drain();
    expect(bus.deadLetters()[0]?.error).toMatch(/Function not found/);
  });

  it("posts the envelope to an HTTP target", async () => {
    const bodies: unknown[] = [];
    const target = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        bodies.push(JSON.parse(body));
        res.end();
      });
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = target.address() as AddressInfo;
      await ruleTo(`http://127.0.0.1:${port}/events`);
      await client.send(new PutEventsCommand({ Entries: [entry({ via: "http" })] }));
      await bus.drain();
      expect(bodies).toMatchObject([{ source: "toolbus", detail: { via: "http" } }]);
    } finally {
      target.close();
    }
  });

  it("applies InputPath and constant Input before invoking a target", async () => {
    const arn = collector();
    await client.send(
      new PutRuleCommand({ Name: "r1", EventBusName: BUS, EventPattern: '{"source":["toolbus"]}' }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: "r1",
        EventBusName: BUS,
        Targets: [
          { Id: "path", Arn: arn, InputPath: "$.detail.call" },
          { Id: "constant", Arn: arn, Input: '{"fixed":true}' },
        ],
      }),
    );
    await client.send(new PutEventsCommand({ Entries: [entry({ call: { id: "c1" } })] }));
    await bus.drain();
    expect(received).toEqual(expect.arrayContaining([{ id: "c1" }, { fixed: true }]));
    expect(received).toHaveLength(2);
  });

  it("lists, pages, describes and deletes rules and their targets", async () => {
    const arn = collector();
    for (const name of ["b", "a", "c"]) await ruleTo(arn, { source: ["toolbus"] }, name);

    const first = await client.send(new ListRulesCommand({ EventBusName: BUS, Limit: 2 }));
    expect(first.Rules?.map((r) => r.Name)).toEqual(["a", "b"]);
    const second = await client.send(
      new ListRulesCommand({ EventBusName: BUS, Limit: 2, NextToken: first.NextToken }),
    );
    expect(second.Rules?.map((r) => r.Name)).toEqual(["c"]);
    expect(second.NextToken).toBeUndefined();

    const targets = await client.send(
      new ListTargetsByRuleCommand({ Rule: "a", EventBusName: BUS }),
    );
    expect(targets.Targets).toEqual([{ Id: "t1", Arn: arn }]);

    const blocked = await client
      .send(new DeleteRuleCommand({ Name: "a", EventBusName: BUS }))
      .catch((e) => e);
    expect(blocked.name).toBe("ValidationException");
    await client.send(new RemoveTargetsCommand({ Rule: "a", EventBusName: BUS, Ids: ["t1"] }));
    await client.send(new DeleteRuleCommand({ Name: "a", EventBusName: BUS }));
    const left = await client.send(new ListRulesCommand({ EventBusName: BUS }));
    expect(left.Rules?.map((r) => r.Name)).toEqual(["b", "c"]);
  });

  it("manages event buses like EventBridge, the default bus included", async () => {
    const again = client.send(new CreateEventBusCommand({ Name: BUS }));
    await expect(again).rejects.toBeInstanceOf(ResourceAlreadyExistsException);

    const described = await client.send(new DescribeEventBusCommand({ Name: BUS }));
    expect(described.Arn).toBe(`arn:aws:events:us-east-1:000000000000:event-bus/${BUS}`);
    expect(described.CreationTime).toBeInstanceOf(Date);

    const listed = await client.send(new ListEventBusesCommand({}));
    expect(listed.EventBuses?.map((b) => b.Name)).toEqual(["default", BUS]);

    const dropDefault = await client
      .send(new DeleteEventBusCommand({ Name: "default" }))
      .catch((e) => e);
    expect(dropDefault.name).toBe("ValidationException");
    await client.send(new DeleteEventBusCommand({ Name: described.Arn }));
    const afterDelete = client.send(new DescribeEventBusCommand({ Name: BUS }));
    await expect(afterDelete).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it("evaluates TestEventPattern with the same matcher the rules use", async () => {
    const event = JSON.stringify({
      id: "1",
      account: "000000000000",
      source: "toolbus",
      time: "2026-11-21T10:00:00Z",
      region: "us-east-1",
      resources: [],
      "detail-type": "ToolResultReceived",
      detail: { status: "failed" },
    });
    const test = (pattern: object) =>
      client.send(
        new TestEventPatternCommand({ EventPattern: JSON.stringify(pattern), Event: event }),
      );
    expect((await test({ detail: { status: ["failed"] } })).Result).toBe(true);
    expect((await test({ detail: { status: [{ "anything-but": "failed" }] } })).Result).toBe(false);
    const invalid = client.send(new TestEventPatternCommand({ EventPattern: "{}", Event: "{}" }));
    await expect(invalid).rejects.toThrow();
  });
});

describe("the local event bus's delivery settings", () => {
  it("delivers every event the configured number of extra times", async () => {
    const bus = new LocalEventBus({ delivery: { duplicateDeliveries: 2 } });
    const client = localEventBridgeClient({ bus });
    const seen: string[] = [];
    const arn = bus.registerFunction(
      "dup",
      (event) => void seen.push((event as { id: string }).id),
    );
    await client.send(new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }));
    await client.send(new PutTargetsCommand({ Rule: "all", Targets: [{ Id: "t", Arn: arn }] }));
    const out = await client.send(
      new PutEventsCommand({ Entries: [{ Source: "toolbus", DetailType: "x", Detail: "{}" }] }),
    );
    await bus.drain();
    bus.close();
    expect(seen).toEqual(Array(3).fill(out.Entries?.[0]?.EventId));
  });

  it("answers raw HTTP requests with AWS-style protocol errors", async () => {
    const bus = new LocalEventBus();
    const server = await startEventBridgeServer(bus);
    try {
      const post = (target: string, body: string) => signedPost(server, target, body);
      const unknown = await post("AWSEvents.CreatePartnerEventSource", "{}");
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({ __type: "UnknownOperationException" });

      const malformed = await post("AWSEvents.PutEvents", "{not json");
      expect(await malformed.json()).toMatchObject({ __type: "SerializationException" });
    } finally {
      bus.close();
      await server.close();
    }
  });

  it("refuses requests not signed with the credentials it handed out, before doing anything", async () => {
    const bus = new LocalEventBus();
    const server = await startEventBridgeServer(bus);
    const forged = JSON.stringify({
      Entries: [{ Source: "toolbus", DetailType: "ToolResultReceived", Detail: "{}" }],
    });
    let delivered = 0;
    const arn = bus.registerFunction("sink", () => void delivered++);
    const inProcess = localEventBridgeClient({ bus });
    await inProcess.send(
      new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }),
    );
    await inProcess.send(new PutTargetsCommand({ Rule: "all", Targets: [{ Id: "t", Arn: arn }] }));
    try {
      const unsigned = await fetch(server.endpoint, {
        method: "POST",
        headers: { "x-amz-target": "AWSEvents.PutEvents", "content-type": JSON_11 },
        body: forged,
      });
      expect(unsigned.status).toBe(403);
      expect(await unsigned.json()).toMatchObject({
        __type: "MissingAuthenticationTokenException",
      });

      const stranger = await signedPost(server, "AWSEvents.PutEvents", forged, {
        accessKeyId: "AKIAEXAMPLE",
        secretAccessKey: server.credentials.secretAccessKey,
      });
      expect(stranger.status).toBe(403);
      expect(await stranger.json()).toMatchObject({ __type: "UnrecognizedClientException" });

      const wrongSecret = await signedPost(server, "AWSEvents.PutEvents", forged, {
        accessKeyId: server.credentials.accessKeyId,
        secretAccessKey: "not-the-secret",
      });
      expect(wrongSecret.status).toBe(403);
      expect(await wrongSecret.json()).toMatchObject({ __type: "InvalidSignatureException" });

      // The SDK, with the credentials handed out, signs and is let through.
      const sdk = localEventBridgeClient(server);
      const { FailedEntryCount } = await sdk.send(
        new PutEventsCommand({
          Entries: [{ Source: "toolbus", DetailType: "ToolResultReceived", Detail: "{}" }],
        }),
      );
      sdk.destroy();
      expect(FailedEntryCount).toBe(0);
      await bus.drain();
      expect(delivered).toBe(1);
    } finally {
      bus.close();
      await server.close();
    }
  });
});

describe("the local event bus's asynchrony", () => {
  it("answers PutEvents before any target starts running", async () => {
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    const order: string[] = [];
    const arn = bus.registerFunction("sync", () => void order.push("target ran"));
    await client.send(new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }));
    await client.send(new PutTargetsCommand({ Rule: "all", Targets: [{ Id: "t", Arn: arn }] }));
    await client.send(
      new PutEventsCommand({ Entries: [{ Source: "toolbus", DetailType: "x", Detail: "{}" }] }),
    );
    order.push("PutEvents answered");
    await bus.drain();
    bus.close();
    expect(order).toEqual(["PutEvents answered", "target ran"]);
  });
});

describe("the local event bus's targets and schedules", () => {
  it("fills an InputTransformer template from the event", async () => {
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    const seen: unknown[] = [];
    const arn = bus.registerFunction("t", (event) => void seen.push(event));
    await client.send(new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }));
    await client.send(
      new PutTargetsCommand({
        Rule: "all",
        Targets: [
          {
            Id: "t",
            Arn: arn,
            InputTransformer: {
              InputPathsMap: { tool: "$.detail.toolId", n: "$.detail.n" },
              InputTemplate:
                '{"summary": "<tool> ran", "count": <n>, "rule": "<aws.events.rule-name>"}',
            },
          },
        ],
      }),
    );
    await client.send(
      new PutEventsCommand({
        Entries: [{ Source: "toolbus", DetailType: "x", Detail: '{"toolId":"web_search","n":3}' }],
      }),
    );
    await bus.drain();
    bus.close();
    expect(seen).toEqual([{ summary: "web_search ran", count: 3, rule: "all" }]);
  });

  it("reports an invalid target per entry and keeps the valid ones", async () => {
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    await client.send(new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }));
    const out = await client.send(
      new PutTargetsCommand({
        Rule: "all",
        Targets: [
          { Id: "good", Arn: bus.functionArn("f") },
          { Id: "bad", Arn: bus.functionArn("f"), Input: "{not json" },
        ],
      }),
    );
    const listed = await client.send(new ListTargetsByRuleCommand({ Rule: "all" }));
    bus.close();
    expect(out.FailedEntryCount).toBe(1);
    expect(out.FailedEntries?.[0]).toMatchObject({
      TargetId: "bad",
      ErrorCode: "ValidationException",
    });
    expect(listed.Targets?.map((t) => t.Id)).toEqual(["good"]);
  });

  it("fires rate() rules as Scheduled Events, and stops when the rule is disabled", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const bus = new LocalEventBus();
      const client = localEventBridgeClient({ bus });
      const seen: Array<Record<string, unknown>> = [];
      const arn = bus.registerFunction("tick", (e) => void seen.push(e as Record<string, unknown>));
      const { RuleArn } = await client.send(
        new PutRuleCommand({ Name: "sweep", ScheduleExpression: "rate(1 minute)" }),
      );
      await client.send(new PutTargetsCommand({ Rule: "sweep", Targets: [{ Id: "t", Arn: arn }] }));
      vi.advanceTimersByTime(2 * 60_000);
      await bus.drain();
      expect(seen).toHaveLength(2);
      expect(seen[0]).toMatchObject({
        source: "aws.events",
        "detail-type": "Scheduled Event",
        resources: [RuleArn],
      });

      await client.send(new DisableRuleCommand({ Name: "sweep" }));
      vi.advanceTimersByTime(5 * 60_000);
      await bus.drain();
      bus.close();
      expect(seen).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
