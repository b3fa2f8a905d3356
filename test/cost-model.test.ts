import { describe, expect, inject, it } from "vitest";
import { type FunctionCounts, measureCostCounts, type ScenarioCounts } from "../bench/cost";

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
      // Every call's two events reached its run's log (how soon is the bench's to say).
      expect(s.loggedAfterAnswerMs).toHaveLength(s.calls);
      // The call's own writes, wherever the tool runs (in the API or its own function):
      // created, claimed, finished. The in-flight index (gsi4) holds keys only, so moving a
      // call along it writes its keys there, not a copy of the item (9 with gsi2, which did).
      expect(perCall(s, writes, ["recorder", "subscriptions", "stream"])).toBe(8);
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
      // The recorder logs a fast call in one write: its result's event brings the scheduling,
      // and the scheduling's own event finds the call finished and writes nothing. 8 units:
      // two entries (their details deflated) of one unit each, the call's marks on its 2 KB
      // item (two) and its leaving the outbox index (one: gsi4 holds its keys only), all
      // doubled (10 with gsi2, which copied the whole item).
      const recorded = s.functions.recorder?.sdk.dynamodb.TransactWriteItems;
      expect((recorded?.requests ?? 0) / s.calls).toBe(1);
      expect((recorded?.writeUnits ?? 0) / s.calls).toBe(8);
      expect(recorded?.failed ?? 0).toBe(0);
    }
    const one = counts.withSubscription;
    expect(one.webhook.requests / one.calls).toBe(2);
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
});
