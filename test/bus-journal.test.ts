import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateEventBusCommand,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalEventBus, localEventBridgeClient } from "../packages/local/src/bus";

const BUS = "journal-bus";
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A bus with one rule whose only target is the function `name`. */
async function busWithTarget(file: string, name: string, fn: (event: unknown) => unknown) {
  const bus = new LocalEventBus({ journalFile: file, delivery: { baseDelayMs: 1, maxDelayMs: 5 } });
  const client = localEventBridgeClient({ bus });
  await client.send(new CreateEventBusCommand({ Name: BUS }));
  await client.send(
    new PutRuleCommand({
      Name: "all",
      EventBusName: BUS,
      EventPattern: JSON.stringify({ source: ["toolbus"] }),
    }),
  );
  await client.send(
    new PutTargetsCommand({
      Rule: "all",
      EventBusName: BUS,
      Targets: [{ Id: "t", Arn: bus.registerFunction(name, fn) }],
    }),
  );
  return { bus, client };
}

describe("the local bus's journal", () => {
  it("delivers again after a restart what it accepted but never finished delivering", async () => {
    dir = await mkdtemp(join(tmpdir(), "bus-journal-"));
    const file = join(dir, "journal.jsonl");
    // The first process accepts two events; one is delivered, the other's target never ends
    // (the process is killed while it runs).
    const first = await busWithTarget(file, "first", (event) =>
      (event as { detail: { n: number } }).detail.n === 1 ? undefined : new Promise(() => {}),
    );
    await first.client.send(
      new PutEventsCommand({
        Entries: [1, 2].map((n) => ({
          EventBusName: BUS,
          Source: "toolbus",
          DetailType: "Test",
          Detail: JSON.stringify({ n }),
        })),
      }),
    );
    // Both accepted; the first one's delivery ends, the second's never does.
    type Line = { put?: { envelope: { id: string; detail: { n: number } } }; done?: string };
    const lines = async () =>
      (await readFile(file, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Line);
    await vi.waitFor(async () => expect((await lines()).some((line) => line.done)).toBe(true), {
      timeout: 5_000,
      interval: 10,
    });
    const journal = await lines();
    const accepted = new Map(
      journal.flatMap(({ put }) =>
        put ? [[put.envelope.detail.n, put.envelope.id] as const] : [],
      ),
    );
    expect([...accepted.keys()].sort()).toEqual([1, 2]);
    expect(journal.filter((line) => line.done).map((line) => line.done)).toEqual([accepted.get(1)]);

    // The next process, same file: only the unfinished event is delivered, once.
    const received: number[] = [];
    const second = await busWithTarget(file, "second", (event) => {
      received.push((event as { detail: { n: number } }).detail.n);
    });
    expect(second.bus.replayJournal()).toBe(1);
    await second.bus.drain();
    expect(received).toEqual([2]);
    // Finished now: a third start has nothing to deliver.
    const third = await busWithTarget(file, "third", () => undefined);
    expect(third.bus.replayJournal()).toBe(0);
    for (const { bus, client } of [first, second, third]) {
      client.destroy();
      bus.close();
    }
  });
});
