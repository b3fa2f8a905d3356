import { randomBytes } from "node:crypto";
import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnavailableError } from "../packages/core/src/errors";
import {
  createDocumentClient,
  DynamoCallStore,
  dynamoStores,
  MAX_STORED_RESULT_BYTES,
} from "../packages/core/src/store/dynamodb";
import { ensureTable } from "../packages/core/src/store/ensure-table";
import { createTableInput } from "../packages/core/src/store/table";
import type { CallRecord, CallResult } from "../packages/wire/src/model/call";
import {
  createTestTable,
  createToolbusTestTable,
  type TestTable,
  testDynamoDbClient,
} from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let calls: DynamoCallStore;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-calls");
  calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

/** Printable ASCII drawn at random: text that deflate cannot make much smaller. */
const randomText = (length: number) =>
  Array.from(randomBytes(length), (byte) => String.fromCharCode(33 + (byte % 94))).join("");

let sequence = 0;
const pendingCall = (overrides: Partial<CallRecord> = {}): CallRecord => {
  sequence += 1;
  return {
    parentRunId: "run-calls",
    callId: `call-${sequence}`,
    toolId: "web_search",
    toolset: "web",
    toolVersion: "1",
    input: { query: "dynamodb conditional writes", filters: { site: ["aws.amazon.com"] } },
    inputHash: `hash-${sequence}`,
    status: "pending",
    mode: "research",
    requestedBy: { id: "key-1", role: "member" },
    scheduledAt: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
};

const succeeded = (overrides: Partial<CallResult> = {}): CallResult => ({
  status: "succeeded",
  output: "Three results.",
  data: { results: [{ title: "DynamoDB", url: "https://aws.amazon.com/dynamodb/" }] },
  citations: [{ url: "https://aws.amazon.com/dynamodb/", title: "DynamoDB" }],
  cached: false,
  stale: false,
  durationMs: 120,
  resultBytes: 512,
  truncated: false,
  completedAt: "2026-01-01T00:00:02.000Z",
  ...overrides,
});

describe("DynamoCallStore", () => {
  it("creates a call once; creating it again returns the first record with created false", async () => {
    const call = pendingCall();
    const first = await calls.create(call);
    const second = await calls.create({ ...call, input: { query: "other" }, inputHash: "other" });

    expect(first).toEqual({ created: true, call });
    expect(second).toEqual({ created: false, call });
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(call);
  });

  it("returns undefined for a call that does not exist", async () => {
    expect(await calls.get("run-calls", "never-created")).toBeUndefined();
  });

  it("claims a pending call once; a second claim returns undefined", async () => {
    const call = pendingCall();
    await calls.create(call);
    const deadlineAt = "2026-01-01T00:00:30.000Z";

    const claimed = await calls.claim(call.parentRunId, call.callId, deadlineAt);
    expect(claimed).toMatchObject({ status: "running", deadlineAt });
    expect(claimed?.startedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await calls.claim(call.parentRunId, call.callId, deadlineAt)).toBeUndefined();
  });

  it("lets exactly one of many concurrent claims win", async () => {
    const call = pendingCall();
    await calls.create(call);
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () =>
        calls.claim(call.parentRunId, call.callId, "2026-01-01T00:01:00.000Z"),
      ),
    );
    expect(attempts.filter((attempt) => attempt !== undefined)).toHaveLength(1);
  });

  it("does not claim a call that does not exist", async () => {
    expect(await calls.claim("run-calls", "ghost", "2026-01-01T00:00:30.000Z")).toBeUndefined();
    expect(await calls.get("run-calls", "ghost")).toBeUndefined();
  });

  it("completes only a running call, storing the result and its status", async () => {
    const call = pendingCall();
    await calls.create(call);
    expect(await calls.complete(call.parentRunId, call.callId, succeeded())).toBeUndefined();

    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    const failed = succeeded({
      status: "failed",
      output: "The search API refused the key.",
      data: null,
      failure: { kind: "upstream_error", message: "401", retryable: false, recovery: "replan" },
    });
    const completed = await calls.complete(call.parentRunId, call.callId, failed);

    expect(completed).toMatchObject({ status: "failed", result: failed });
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(completed);
    expect(await calls.complete(call.parentRunId, call.callId, succeeded())).toBeUndefined();
  });

  it("stores an oversize result truncated: data null, output cut with a note, within the limit", async () => {
    const call = pendingCall();
    await calls.create(call);
    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    const huge = succeeded({
      output: "é".repeat(250_000),
      data: {
        rows: Array.from({ length: 5_000 }, (_, index) => ({ index, text: "row ".repeat(20) })),
      },
      resultBytes: 900_000,
    });

    const completed = await calls.complete(call.parentRunId, call.callId, huge);

    const result = completed?.result;
    expect(completed?.status).toBe("succeeded");
    expect(result?.truncated).toBe(true);
    expect(result?.data).toBeNull();
    expect(result?.resultBytes).toBe(900_000);
    expect(result?.output.startsWith("éé")).toBe(true);
    expect(result?.output).toMatch(/\[output truncated: \d+ of 500000 bytes kept\]$/);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(MAX_STORED_RESULT_BYTES);
    expect((await calls.get(call.parentRunId, call.callId))?.result).toEqual(result);
  });

  it("keeps the full output when dropping data alone makes the result fit", async () => {
    const call = pendingCall();
    await calls.create(call);
    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    const output = "summary ".repeat(1_000);
    const completed = await calls.complete(
      call.parentRunId,
      call.callId,
      succeeded({ output, data: { blob: "z".repeat(350_000) } }),
    );
    expect(completed?.result).toMatchObject({ output, data: null, truncated: true });
  });

  it("still completes when a large input leaves less room than the result budget", async () => {
    // Random text: deflated (json-text.ts) it stays nearly as large, as repeated text would not.
    const call = pendingCall({ input: { document: randomText(250_000) } });
    await calls.create(call);
    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    const completed = await calls.complete(
      call.parentRunId,
      call.callId,
      succeeded({ output: randomText(280_000) }),
    );
    expect(completed?.status).toBe("succeeded");
    expect(completed?.result?.truncated).toBe(true);
  });

  it("stores data nested deeper than DynamoDB's maps allow whole, as JSON text", async () => {
    const call = pendingCall();
    await calls.create(call);
    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    let deep: unknown = "bottom";
    for (let level = 0; level < 40; level += 1) deep = { level: deep };

    const completed = await calls.complete(
      call.parentRunId,
      call.callId,
      succeeded({ output: "Deep.", data: deep }),
    );
    expect(completed?.result).toMatchObject({ output: "Deep.", data: deep, truncated: false });
    expect((await calls.get(call.parentRunId, call.callId))?.result?.data).toEqual(deep);
  });

  it("stores numbers JSON allows and DynamoDB does not (beyond 2^53, 1e300, 5e-324) as given", async () => {
    // Parsed from text, as a request body is: the literal would lose precision in the source.
    const numbers = JSON.parse(
      '{"big": 123456789012345678901234567890, "huge": 1e300, "tiny": 5e-324, "neg": -1e200}',
    ) as Record<string, number>;
    const call = pendingCall({ input: numbers });
    expect((await calls.create(call)).call.input).toEqual(numbers);
    await calls.claim(call.parentRunId, call.callId, "2026-01-01T00:00:30.000Z");
    await calls.complete(call.parentRunId, call.callId, succeeded({ data: { count: numbers } }));
    const stored = await calls.get(call.parentRunId, call.callId);
    expect(stored?.input).toEqual(numbers);
    expect(stored?.result?.data).toEqual({ count: numbers });
    // The same again: the existing call comes back from the failed condition, decoded.
    expect((await calls.create(call)).call.input).toEqual(numbers);
  });

  it("reads calls stored before input and result were JSON text, as DynamoDB maps", async () => {
    const call = pendingCall({ status: "succeeded", result: succeeded() });
    await documents.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: `RUN#${call.parentRunId}`, sk: `CALL#${call.callId}`, ...call },
      }),
    );
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(call);
  });

  /** A call created, claimed and completed: what a handler has before it announces. */
  const finishedCall = async (overrides: Partial<CallRecord> = {}) => {
    const call = pendingCall(overrides);
    await calls.create(call);
    await calls.claim(call.parentRunId, call.callId, "2099-01-01T00:00:00.000Z");
    const completed = await calls.complete(call.parentRunId, call.callId, succeeded());
    if (!completed) throw new Error("not completed");
    return completed;
  };

  it("keeps a finished call on the index where it ran until its result is logged", async () => {
    const call = await finishedCall();
    const later = "2100-01-01T00:00:00.000Z";
    expect((await calls.listStuck(later, 1000)).some((c) => c.callId === call.callId)).toBe(true);
    expect((await calls.get(call.parentRunId, call.callId))?.resultPublishedAt).toBeUndefined();
  });

  it("lists the calls whose deadline has passed where they ran, oldest deadline first, finished ones with their result", async () => {
    // A table of its own: other tests leave running calls behind.
    const own = await createToolbusTestTable(client, "store-stuck");
    try {
      const store = new DynamoCallStore({ client: documents, tableName: own.tableName });
      const claimed = async (deadlineAt: string) => {
        const call = pendingCall();
        await store.create(call);
        await store.claim(call.parentRunId, call.callId, deadlineAt);
        return call.callId;
      };
      const late = await claimed("2026-01-01T00:05:00.000Z");
      const early = await claimed("2026-01-01T00:01:00.000Z");
      await claimed("2026-01-01T00:20:00.000Z");
      const finished = await claimed("2026-01-01T00:02:00.000Z");
      await store.complete("run-calls", finished, succeeded());
      await store.create(pendingCall());

      const stuck = await store.listStuck("2026-01-01T00:10:00.000Z");
      // Finished but not logged: still where it ran, for the sweeper to announce.
      expect(stuck.map((call) => call.callId)).toEqual([early, finished, late]);
      expect(stuck.map((call) => call.status)).toEqual(["running", "succeeded", "running"]);
      expect(stuck[1]?.result?.status).toBe("succeeded");
      expect(await store.listStuck("2026-01-01T00:10:00.000Z", 1)).toHaveLength(1);
      expect(await store.listStuck("2026-01-01T00:00:00.000Z")).toEqual([]);
    } finally {
      await own.drop();
    }
  });
});

describe("the index of calls in flight (gsi4, keys only)", () => {
  it("lists more calls than one batch read takes, oldest first, at most the limit", async () => {
    const own = await createToolbusTestTable(client, "store-batches");
    try {
      const store = new DynamoCallStore({ client: documents, tableName: own.tableName });
      // 130 deadlines a second apart, claimed out of order.
      const start = Date.parse("2026-01-01T00:00:00.000Z");
      const deadlines = Array.from({ length: 130 }, (_, i) =>
        new Date(start + ((i * 7919) % 130) * 1000).toISOString(),
      );
      for (const deadline of deadlines) {
        const call = pendingCall({ parentRunId: "run-batches" });
        await store.create(call);
        await store.claim(call.parentRunId, call.callId, deadline);
      }
      const stuck = await store.listStuck("2026-01-02T00:00:00.000Z", 120);
      expect(stuck.map((call) => call.deadlineAt)).toEqual([...deadlines].sort().slice(0, 120));
      expect(stuck.every((call) => call.status === "running")).toBe(true);
      expect(await store.listStuck("2026-01-02T00:00:00.000Z", 500)).toHaveLength(130);
    } finally {
      await own.drop();
    }
  });

  it("gives a table of the release before (gsi2 with whole items) gsi4 with the calls already in flight, and keeps gsi2", async () => {
    const { TableName: _unused, ...definition } = createTableInput("unused");
    const previous = await createTestTable(client, {
      ...definition,
      GlobalSecondaryIndexes: [
        ...(definition.GlobalSecondaryIndexes ?? []).filter((index) => index.IndexName !== "gsi4"),
        {
          IndexName: "gsi2",
          KeySchema: [
            { AttributeName: "gsi2pk", KeyType: "HASH" },
            { AttributeName: "gsi2sk", KeyType: "RANGE" },
          ],
          Projection: { ProjectionType: "ALL" },
        },
      ],
      namePrefix: "store-calls-gsi2",
    });
    try {
      const store = new DynamoCallStore({ client: documents, tableName: previous.tableName });
      const running = pendingCall({ parentRunId: "run-previous" });
      await store.create(running);
      await store.claim(running.parentRunId, running.callId, "2026-01-01T00:01:00.000Z");
      const waiting = pendingCall({ parentRunId: "run-previous" });
      await store.create(waiting);
      const finished = pendingCall({ parentRunId: "run-previous" });
      await store.create(finished);
      await store.claim(finished.parentRunId, finished.callId, "2026-01-01T00:01:00.000Z");
      await store.complete(finished.parentRunId, finished.callId, succeeded());
      // Refused by its run's policy: finished without running.
      const refused = pendingCall({
        parentRunId: "run-previous",
        status: "succeeded",
        result: succeeded(),
      });
      await store.create(refused);
      const approval = {
        requestedAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2026-01-01T01:00:00.000Z",
      };
      const awaiting = pendingCall({
        parentRunId: "run-previous",
        status: "awaiting_approval",
        approval,
      });
      await store.create(awaiting);

      await ensureTable(client, previous.tableName);
      const { Table } = await client.send(
        new DescribeTableCommand({ TableName: previous.tableName }),
      );
      expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual([
        "gsi1",
        "gsi2",
        "gsi3",
        "gsi4",
      ]);
      const ids = (found: CallRecord[]) => found.map((call) => call.callId);
      const later = "2026-01-02T00:00:00.000Z";
      expect(ids(await store.listStuck(later)).sort()).toEqual(
        [running.callId, finished.callId].sort(),
      );
      expect(ids(await store.listWaiting(later))).toEqual([waiting.callId]);
      expect(ids(await store.listUnannounced(later))).toEqual([refused.callId]);
      expect(ids(await store.listAwaitingApproval(later))).toEqual([awaiting.callId]);
      // The whole record comes back, not the index's keys.
      expect((await store.listAwaitingApproval(later))[0]).toMatchObject({
        approval,
        input: awaiting.input,
      });
    } finally {
      await previous.drop();
    }
  });
});

describe("calls by trace", () => {
  it("finds a trace's calls across runs, oldest first, and keeps them there through claim and completion", async () => {
    const trace = { traceId: "1".repeat(32), parentId: "2".repeat(16), sampled: true };
    const first = pendingCall({ parentRunId: "run-trace-a", trace });
    const second = pendingCall({
      parentRunId: "run-trace-b",
      trace,
      scheduledAt: "2026-01-01T00:00:01.000Z",
    });
    await calls.create(second);
    await calls.create(first);
    await calls.create(pendingCall({ trace: { ...trace, traceId: "3".repeat(32) } }));
    await calls.claim(first.parentRunId, first.callId, "2026-01-01T00:05:00.000Z");
    await calls.complete(first.parentRunId, first.callId, succeeded());
    const found = await calls.listByTrace(trace.traceId);
    expect(found.map((call) => [call.parentRunId, call.callId, call.status])).toEqual([
      [first.parentRunId, first.callId, "succeeded"],
      [second.parentRunId, second.callId, "pending"],
    ]);
    expect(await calls.listByTrace(trace.traceId, 1)).toHaveLength(1);
    expect(await calls.listByTrace("4".repeat(32))).toEqual([]);
  });

  it("gives a table made before the trace index that index, and finds calls stored after", async () => {
    const { TableName: _unused, ...definition } = createTableInput("unused");
    const old = await createTestTable(client, {
      ...definition,
      GlobalSecondaryIndexes: definition.GlobalSecondaryIndexes?.filter(
        (index) => index.IndexName !== "gsi3",
      ),
      AttributeDefinitions: definition.AttributeDefinitions?.filter(
        (attribute) => !attribute.AttributeName?.startsWith("gsi3"),
      ),
      namePrefix: "store-calls-old",
    });
    try {
      await ensureTable(client, old.tableName);
      await ensureTable(client, old.tableName);
      const { Table } = await client.send(new DescribeTableCommand({ TableName: old.tableName }));
      expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual([
        "gsi1",
        "gsi3",
        "gsi4",
      ]);
      const store = new DynamoCallStore({ client: documents, tableName: old.tableName });
      const trace = { traceId: "5".repeat(32), parentId: "6".repeat(16), sampled: false };
      const call = pendingCall({ trace });
      await store.create(call);
      expect((await store.listByTrace(trace.traceId)).map((found) => found.callId)).toEqual([
        call.callId,
      ]);
    } finally {
      await old.drop();
    }
  });
});

describe("a store whose DynamoDB cannot be reached", () => {
  it("raises UnavailableError with the SDK error as cause", async () => {
    const closed = localDynamoDbClient("http://127.0.0.1:9", { maxAttempts: 1 });
    const stores = dynamoStores({ client: createDocumentClient(closed), tableName: "absent" });
    try {
      const failure = await stores.calls.get("run-1", "call-1").catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UnavailableError);
      expect((failure as UnavailableError).cause).toBeInstanceOf(Error);
      await expect(stores.catalog.list()).rejects.toBeInstanceOf(UnavailableError);
      await expect(stores.keys.verify("tbk_x")).rejects.toBeInstanceOf(UnavailableError);
      await expect(stores.events.read("run-1")).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      closed.destroy();
    }
  });
});
