import { PutRuleCommand, PutTargetsCommand } from "@aws-sdk/client-eventbridge";
import { describe, expect, it } from "vitest";
import { PublishError } from "../packages/core/src/errors";
import { EventPublisher, type OutgoingEvent } from "../packages/core/src/events/publisher";
import {
  generateLocalCredentials,
  LocalEventBus,
  localEventBridgeClient,
} from "../packages/local/src/bus";

const events = (n: number): OutgoingEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    detailType: "ToolCallScheduled",
    detail: { eventKey: `run-1/c${i}/scheduled`, parentRunId: "run-1", i },
  }));

async function busWith(refuse?: (entry: { Detail?: string }) => boolean) {
  const attempts = new Map<string, number>();
  const bus = new LocalEventBus({
    refuseEntry: (entry) => {
      const key = JSON.parse(entry.Detail ?? "{}").eventKey as string;
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
      return refuse?.(entry) && (attempts.get(key) ?? 0) === 1
        ? { code: "ThrottlingException", message: "Rate exceeded" }
        : undefined;
    },
  });
  const client = localEventBridgeClient({ bus });
  const delivered: string[] = [];
  const arn = bus.registerFunction("sink", (e) => {
    delivered.push((e as { detail: { eventKey: string } }).detail.eventKey);
  });
  await client.send(new PutRuleCommand({ Name: "all", EventPattern: '{"source":["toolbus"]}' }));
  await client.send(new PutTargetsCommand({ Rule: "all", Targets: [{ Id: "sink", Arn: arn }] }));
  return { bus, client, attempts, delivered };
}

describe("the event publisher", () => {
  it("publishes in batches of at most ten and every event arrives once", async () => {
    const { bus, client, delivered } = await busWith();
    const sizes: number[] = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        sizes.push((args.input as { Entries: unknown[] }).Entries.length);
        return next(args);
      },
      { step: "initialize" },
    );
    await new EventPublisher({ client, busName: "default" }).publish(events(23));
    await bus.drain();
    bus.close();
    expect(sizes).toEqual([10, 10, 3]);
    expect(new Set(delivered).size).toBe(23);
    expect(delivered).toHaveLength(23);
  });

  it("resends only the entries the bus refused", async () => {
    const { bus, client, attempts, delivered } = await busWith(
      (entry) => JSON.parse(entry.Detail ?? "{}").i % 3 === 0,
    );
    await new EventPublisher({ client, busName: "default", baseDelayMs: 1 }).publish(events(7));
    await bus.drain();
    bus.close();
    expect([...attempts.values()]).toEqual([2, 1, 1, 2, 1, 1, 2]);
    expect(delivered).toHaveLength(7);
  });

  it("gives up with a PublishError naming the events the bus kept refusing", async () => {
    const bus = new LocalEventBus({
      refuseEntry: () => ({ code: "InternalFailure", message: "down" }),
    });
    const publisher = new EventPublisher({
      client: localEventBridgeClient({ bus }),
      busName: "default",
      maxAttempts: 3,
      baseDelayMs: 1,
    });
    const attempt = publisher.publish(events(2));
    await expect(attempt).rejects.toBeInstanceOf(PublishError);
    await expect(attempt).rejects.toThrow(/run-1\/c0\/scheduled \(InternalFailure: down\)/);
    bus.close();
  });

  it("reports an unreachable bus as a PublishError", async () => {
    const publisher = new EventPublisher({
      client: localEventBridgeClient({
        endpoint: "http://127.0.0.1:9",
        credentials: generateLocalCredentials(),
      }),
      busName: "default",
      maxAttempts: 2,
      baseDelayMs: 1,
    });
    await expect(publisher.publish(events(1))).rejects.toThrow(/could not be reached/);
  });
});
