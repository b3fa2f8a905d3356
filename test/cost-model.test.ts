import { randomUUID } from "node:crypto";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import { ensureTable } from "@toolbus/core";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { describe, expect, inject, it } from "vitest";
import {
  type FunctionCounts,
  measureCostCounts,
  priceScenario,
  type ScenarioCounts,
} from "../bench/cost";
import { itemBytes } from "../bench/cost/meter";
import { type LambdaStreamRecord, TableStream } from "../bench/cost/table-stream";

/**
 * The AWS-path cost model's counts (bench/cost): what a synchronous call writes, publishes and
 * hands to the stage stream does not depend on timing, so it is asserted here; durations and
 * log bytes are measured by `npm run bench -- cost` and never asserted.
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
      // Both of a call's events, each well under 64 KB, on the bus: the stage stream is not fed
      // by it but by the table's change stream, no queue in between.
      expect(perCall(s, (f) => f.sdk.eventbridge.billedEvents)).toBe(2);
      expect(priceScenario(s).resources.map((r) => r.resource)).not.toContainEqual(
        expect.stringMatching(/SQS/),
      );
      // The call's one run-log entry is one record of the table's stream, handed to the
      // stream's function in its own batch (one call at a time): one invocation a call; the
      // call's other writes are filtered out before any invocation.
      expect(s.tableStream.invocations / s.calls).toBe(1);
      expect(s.tableStream.batches / s.calls).toBe(1);
      expect(s.tableStream.records / s.calls).toBe(1);
      expect(s.tableStream.filteredOut).toBeGreaterThan(0);
      expect(s.tableStream.retries).toBe(0);
      expect(s.tableStream.discarded).toBe(0);
      expect(s.functions.stream?.invocations).toBe(s.tableStream.invocations);
      // Every call's two events were in its run's log when its answer left: whoever finished
      // the call logged them first, so a reader's first read after the answer finds them.
      expect(s.loggedAfterAnswerMs).toHaveLength(s.calls);
      expect(s.loggedAtAnswer).toBe(s.calls);
      // The API's writes: the call's own — the run's count (one), the call created (one, its
      // keys on the trace index and on the in-flight index, gsi4, one each), finished (one: the
      // item, compact, is under 1 KB, and it stays where it ran on gsi4 until it is logged, so
      // the index is not written to move it) — and its log, written by the API alone, with no
      // transaction (nobody else was told of the call): one entry holding both events
      // (deflated, one unit), then the call's marks (one) and its leaving gsi4 (one).
      const api = s.functions.api as FunctionCounts;
      expect(writes(api) / s.calls).toBe(8);
      expect((api.sdk.dynamodb.PutItem?.writeUnits ?? 0) / s.calls).toBe(4);
      expect((api.sdk.dynamodb.UpdateItem?.writeUnits ?? 0) / s.calls).toBe(4);
      expect(api.sdk.dynamodb.TransactWriteItems?.requests ?? 0).toBe(0);
      expect(api.sdk.dynamodb.PutItem?.failed ?? 0).toBe(0);
      expect(api.sdk.dynamodb.UpdateItem?.failed ?? 0).toBe(0);
      // The stream: one chunk a batch (its events deflated: one unit), nothing else written
      // (chunks chain, so no head moves), and no read of the call's record (the run's log is
      // the stream's source: nothing to check).
      const stream = s.functions.stream as FunctionCounts;
      expect(writes(stream) / s.calls).toBe(1);
      const streamReads = Object.values(stream.sdk.dynamodb).reduce(
        (sum, row) => sum + row.readUnits,
        0,
      );
      expect(streamReads / s.calls).toBe(0);
      // Whoever finishes a call logs it before the caller has the answer; the events it
      // announces say so (`log: "direct"`), and the recorder's rule skips them: the recorder is
      // not invoked at all.
      expect(s.functions.recorder?.invocations ?? 0).toBe(0);
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

  it("hands the table's new run-log entries to the stream's function as Lambda would", async () => {
    const endpoint = inject("dynamodbEndpoint");
    const dynamodb = localDynamoDbClient(endpoint);
    const streams = new DynamoDBStreamsClient({
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      endpoint,
    });
    const tableName = `toolbus-table-stream-${randomUUID().slice(0, 8)}`;
    const put = (sk: string) =>
      dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: "RUN#r" }, sk: { S: sk }, z: { B: Buffer.from("zipped") } },
        }),
      );
    const batches: LambdaStreamRecord[][] = [];
    let failures = 1;
    const stream = new TableStream({
      dynamodb,
      streams,
      tableName,
      consume: async (event) => {
        batches.push(event.Records);
        // The first invocation fails: the same batch comes again.
        if (failures-- > 0) return { error: new Error("first attempt fails") };
        return {};
      },
    });
    try {
      await ensureTable(dynamodb, tableName, { changeStream: true });
      // Written before the event source existed: not handed over.
      await put("LOG#0001");
      await stream.start();
      await put("CALL#c");
      await put("LOG#0002");
      await put("LOG#0003");
      await stream.settled();
      const sks = batches.flatMap((batch) => batch.map((r) => r.dynamodb.Keys?.sk));
      expect(sks).not.toContainEqual({ S: "LOG#0001" });
      expect(stream.counts.filteredOut).toBeGreaterThanOrEqual(1);
      expect(stream.counts.records).toBe(2);
      expect(stream.counts.retries).toBe(1);
      expect(stream.counts.invocations).toBe(stream.counts.batches + 1);
      expect(stream.counts.discarded).toBe(0);
      const delivered = batches.slice(1).flat();
      expect(delivered.map((r) => r.dynamodb.Keys)).toEqual([
        { pk: { S: "RUN#r" }, sk: { S: "LOG#0002" } },
        { pk: { S: "RUN#r" }, sk: { S: "LOG#0003" } },
      ]);
      expect(delivered[0]).toMatchObject({
        eventName: "INSERT",
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: "us-east-1",
        eventSourceARN: expect.stringContaining(tableName),
        dynamodb: {
          ApproximateCreationDateTime: expect.any(Number),
          NewImage: { z: { B: Buffer.from("zipped").toString("base64") } },
          StreamViewType: "NEW_IMAGE",
        },
      });
    } finally {
      await stream.stop();
      dynamodb.destroy();
      streams.destroy();
    }
  }, 30_000);

  it("sizes an item as DynamoDB bills it: names and values, numbers by their digits", () => {
    expect(itemBytes({ pk: { S: "RUN#a" } })).toBe(7);
    expect(itemBytes({ n: { N: "12345" } })).toBe(1 + 4);
    expect(itemBytes({ z: { B: new Uint8Array(10) } })).toBe(11);
    expect(itemBytes({ m: { M: { k: { S: "vv" } } } })).toBe(1 + 3 + 1 + 1 + 2);
    expect(itemBytes({ l: { L: [{ BOOL: true }, { NULL: true }] } })).toBe(1 + 3 + 2 + 2);
    expect(itemBytes({ é: { S: "€" } })).toBe(2 + 3);
  });
});
