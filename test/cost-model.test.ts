import { describe, expect, inject, it } from "vitest";
import { type FunctionCounts, measureCostCounts, type ScenarioCounts } from "../bench/cost";
import { itemBytes } from "../bench/cost/meter";

/**
 * The AWS-path cost model's counts (bench/cost): what a synchronous call writes, publishes and
 * queues does not depend on timing, so it is asserted here; durations and log bytes are
 * measured by `npm run bench -- cost` and never asserted. The stream is left out of the exact
 * figures: whether both of a call's events reach it in one batch depends on timing.
 */

const perCall = (s: ScenarioCounts, pick: (f: FunctionCounts) => number, skip: string[] = []) =>
  Object.entries(s.functions)
    .filter(([handler]) => !skip.includes(handler))
    .reduce((sum, [, f]) => sum + pick(f), 0) / s.calls;

const writes = (f: FunctionCounts) =>
  Object.entries(f.sdk.dynamodb)
    .filter(([operation]) => /^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(operation))
    .reduce((sum, [, row]) => sum + row.writeUnits, 0);

describe("the AWS-path cost model", () => {
  it("counts the same requests, units and events for every synchronous call", async () => {
    const counts = await measureCostCounts({
      calls: 6,
      warmup: 2,
      dynamodbEndpoint: inject("dynamodbEndpoint"),
    });
    for (const s of [counts.withoutSubscription, counts.withSubscription]) {
      expect(s.apiRequests).toBe(s.calls);
      expect(s.functions.api?.invocations).toBe(s.calls);
      for (const f of Object.values(s.functions)) expect(f.errors).toBe(0);
      // Both of a call's events, each well under 64 KB, through the stage stream's queue.
      expect(perCall(s, (f) => f.sdk.eventbridge.billedEvents)).toBe(2);
      expect(s.queue.sendMessage / s.calls).toBe(2);
      expect(s.queue.deadLettered).toBe(0);
      // Every call's two events were in its run's log when its answer left: whoever finished
      // the call logged them first, so a reader's first read after the answer finds them.
      expect(s.loggedAfterAnswerMs).toHaveLength(s.calls);
      expect(s.loggedAtAnswer).toBe(s.calls);
      // The call's own writes, wherever the tool runs (in the API or its own function): the
      // run's count (one), the call created (one, its keys on the trace index and on the
      // in-flight index, gsi4, one each), finished (one: the item, compact, is under 1 KB, and
      // it stays where it ran on gsi4 until it is logged, so the index is not written to move it).
      const own = (f: FunctionCounts) =>
        writes(f) - (f.sdk.dynamodb.TransactWriteItems?.writeUnits ?? 0);
      expect(perCall(s, own, ["recorder", "subscriptions", "stream"])).toBe(5);
      // The stream: one chunk (its events deflated: one unit) and one head move per batch; a
      // call's two events share a batch unless they were published apart.
      const stream = perCall(s, writes, [
        "api",
        "tools/readability_analyzer",
        "recorder",
        "subscriptions",
      ]);
      expect(stream).toBeGreaterThanOrEqual(2);
      expect(stream).toBeLessThanOrEqual(4);
      // Whoever finishes a call logs it, in one write, before the caller has the answer; the
      // events it announces say so (`log: "direct"`), and the recorder's rule skips them: the
      // recorder is not invoked at all. 6 units, as AWS bills a transaction (per item, not on
      // the items' total as DynamoDB Local reports it): one entry holding both events (deflated,
      // one unit), the call's marks on its item (one: compact, it is under 1 KB) and its leaving
      // the outbox index (one: gsi4 holds its keys only), all doubled.
      expect(s.functions.recorder?.invocations ?? 0).toBe(0);
      const logged = s.functions.api?.sdk.dynamodb.TransactWriteItems;
      expect((logged?.requests ?? 0) / s.calls).toBe(1);
      expect((logged?.writeUnits ?? 0) / s.calls).toBe(6);
      expect(logged?.failed ?? 0).toBe(0);
    }
    const one = counts.withSubscription;
    expect(one.webhook.requests / one.calls).toBe(2);
    // No subscription, no fan-out: its rule is off until the first one is made, then each of
    // a call's two events is handed to it.
    expect(counts.withoutSubscription.functions.subscriptions?.invocations).toBe(0);
    expect((one.functions.subscriptions?.invocations ?? 0) / one.calls).toBe(2);
    expect(
      perCall(counts.withoutSubscription, writes, [
        "api",
        "tools/readability_analyzer",
        "stream",
        "recorder",
      ]),
    ).toBe(0);
    // A delivery whose first attempt succeeds writes nothing: only a failed one is queued.
    expect(writes(one.functions.subscriptions as FunctionCounts) / one.calls).toBe(0);
  }, 180_000);

  it("sizes an item as DynamoDB bills it: names and values, numbers by their digits", () => {
    expect(itemBytes({ pk: { S: "RUN#a" } })).toBe(7);
    expect(itemBytes({ n: { N: "12345" } })).toBe(1 + 4);
    expect(itemBytes({ z: { B: new Uint8Array(10) } })).toBe(11);
    expect(itemBytes({ m: { M: { k: { S: "vv" } } } })).toBe(1 + 3 + 1 + 1 + 2);
    expect(itemBytes({ l: { L: [{ BOOL: true }, { NULL: true }] } })).toBe(1 + 3 + 2 + 2);
    expect(itemBytes({ é: { S: "€" } })).toBe(2 + 3);
  });
});
