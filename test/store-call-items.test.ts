import { randomBytes } from "node:crypto";
import { type AttributeValue, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itemBytes } from "../bench/cost/meter";
import { ValidationError } from "../packages/core/src/errors";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
} from "../packages/core/src/store/dynamodb";
import { JSON_FIELDS } from "../packages/core/src/store/dynamodb/call-runs";
import {
  callKey,
  PENDING_PARTITION,
  RUNNING_PARTITION,
  traceIndexKey,
} from "../packages/core/src/store/dynamodb/items";
import { encodeJsonFields } from "../packages/core/src/store/dynamodb/json-text";
import { inputHashOf } from "../packages/core/src/util/canonical-json";
import type { CallRecord, CallResult } from "../packages/wire/src/model/call";
import { resultEvent, scheduledEvent, succeededResult } from "./support/calls";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * A call's input and result as its item keeps them: deflated where that is smaller (every write
 * of the item is billed per started KB of it), as text where it is not, and as text in items
 * earlier releases wrote; either way read back exactly, by every reader and every condition
 * that asks for them.
 */

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let calls: DynamoCallStore;
let log: DynamoEventLog;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-call-items");
  calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
  log = new DynamoEventLog({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const LATER = "2100-01-01T00:00:00.000Z";
const DEADLINE = "2099-01-01T00:00:00.000Z";

/** Prose an agent might send, with a number JSON allows and DynamoDB does not. */
const longInput = {
  text: "Toolbus serves tools to agents. Each call is stored before it runs, announced on the bus, and kept in its run's log. ".repeat(
    4,
  ),
  options: { language: "en", big: JSON.parse("123456789012345678901234567890") as number },
};

/** Eight search hits: over 1 KB as text, well under it deflated (JSON repeats its keys). */
const searchResult = (): CallResult => {
  const results = Array.from({ length: 8 }, (_, index) => ({
    title: `DynamoDB conditional writes, part ${index + 1}`,
    url: `https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/part-${index + 1}.html`,
    snippet: "A conditional write succeeds only if the item's attributes meet the condition.",
  }));
  return succeededResult({
    output: results.map((hit, index) => `${index + 1}. ${hit.title} (${hit.url})`).join("\n"),
    data: { results },
    resultBytes: 2_048,
  });
};

let sequence = 0;
/** A refusal whose reason is long enough to be stored deflated where that is on. */
const longRefusal = (): CallResult =>
  succeededResult({
    status: "failed",
    output: "Denied: the reviewer did not allow this tool to act on the repository. ".repeat(6),
    data: null,
    failure: { kind: "denied", message: "not allowed", retryable: false, recovery: "replan" },
  });

const newCall = (overrides: Partial<CallRecord> = {}): CallRecord => {
  sequence += 1;
  return {
    parentRunId: "run-items",
    callId: `call-${sequence}`,
    toolId: "web_search",
    toolset: "research",
    toolVersion: "1",
    input: { query: "dynamodb" },
    inputHash: `hash-${sequence}`,
    status: "pending",
    requestedBy: { id: "tester", role: "member" },
    scheduledAt: "2026-01-01T00:00:01.000Z",
    ...overrides,
  };
};

/** The call's item as DynamoDB holds it. */
async function rawItem(call: Pick<CallRecord, "parentRunId" | "callId">) {
  const { Item } = await documents.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: `RUN#${call.parentRunId}`, sk: `CALL#${call.callId}` },
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new Error(`${call.callId} is not stored`);
  return Item;
}

/** The call's item as releases before deflating wrote it: input and result as JSON text. */
async function putAsText(call: CallRecord, index: Record<string, string> = {}) {
  const { input, result, ...rest } = call;
  await documents.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `RUN#${call.parentRunId}`,
        sk: `CALL#${call.callId}`,
        ...rest,
        inputJson: JSON.stringify(input),
        ...(result === undefined ? {} : { resultJson: JSON.stringify(result) }),
        ...index,
      },
    }),
  );
}

/** Which forms the item holds input and result in. */
const forms = (item: Record<string, unknown>) =>
  Object.keys(item)
    .filter((name) => /^(input|result)(Json|Z)?$/.test(name))
    .sort();

async function finished(
  call: CallRecord,
  result: CallResult,
  store: DynamoCallStore = calls,
): Promise<CallRecord> {
  await store.create(call);
  await store.claim(call.parentRunId, call.callId, DEADLINE);
  const done = await store.complete(call.parentRunId, call.callId, result);
  if (!done) throw new Error(`${call.callId} was not completed`);
  return done;
}

const scheduled = scheduledEvent;
const resulted = (call: CallRecord) => resultEvent(call);

describe("a call's input and result as its item keeps them", () => {
  it("reads, runs and finishes a call an earlier release wrote with its input as text", async () => {
    const call = newCall({ input: longInput });
    await putAsText(call);
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(call);
    await calls.claim(call.parentRunId, call.callId, DEADLINE);
    const result = searchResult();
    const done = await calls.complete(call.parentRunId, call.callId, result);
    expect(done).toMatchObject({ status: "succeeded", input: longInput, result });
    // The input keeps the form it was written in; the result takes this release's.
    expect(forms(await rawItem(call))).toEqual(["inputJson", "resultZ"]);
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(done);
  });

  it("keeps a long input and result deflated, and gives them back exactly wherever the call is read", async () => {
    const call = newCall({ input: longInput });
    expect((await calls.create(call)).call).toEqual(call);
    expect(forms(await rawItem(call))).toEqual(["inputZ"]);
    // Created again: the first record comes back from the failed condition, decoded.
    expect(await calls.create({ ...call, input: { other: true } })).toEqual({
      created: false,
      call,
    });

    await calls.claim(call.parentRunId, call.callId, DEADLINE);
    const result = searchResult();
    const completed = await calls.complete(call.parentRunId, call.callId, result);
    const item = await rawItem(call);
    expect(forms(item)).toEqual(["inputZ", "resultZ"]);
    expect((item.resultZ as Uint8Array).length).toBeLessThan(JSON.stringify(result).length / 2);

    expect(completed).toMatchObject({ status: "succeeded", input: longInput, result });
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(completed);
    // The outbox's readers read the items behind the index (where it ran, until it is logged).
    const unlogged = await calls.listStuck(LATER, 1000);
    expect(unlogged.find((c) => c.callId === call.callId)).toEqual(completed);
  });

  it("keeps an input under 128 characters as readable text, and deflates a result's longer JSON", async () => {
    const call = newCall();
    expect(JSON.stringify(call.input).length).toBeLessThan(128);
    const done = await finished(call, succeededResult());
    // A result's own fields alone make about 180 characters of JSON, which deflates smaller.
    expect(forms(await rawItem(call))).toEqual(["inputJson", "resultZ"]);
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(done);
  });

  it("finishes a call whose result deflates under 1 KB with one write unit for its item", async () => {
    const own = testDynamoDbClient();
    const tableUnits: number[] = [];
    own.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "UpdateItemCommand") return next(args);
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = "INDEXES";
        const answer = await next(args);
        const consumed = (
          answer.output as { ConsumedCapacity?: { Table?: { CapacityUnits?: number } } }
        ).ConsumedCapacity;
        tableUnits.push(consumed?.Table?.CapacityUnits ?? Number.NaN);
        return answer;
      },
      { step: "initialize", name: "meterUpdates" },
    );
    try {
      const metered = new DynamoCallStore({
        client: createDocumentClient(own),
        tableName: table.tableName,
      });
      const call = newCall();
      const result = searchResult();
      // As text, the result alone would take the item past 1 KB: two units a write.
      expect(Buffer.byteLength(JSON.stringify(result))).toBeGreaterThan(1_024);
      await metered.create(call);
      await metered.claim(call.parentRunId, call.callId, DEADLINE);
      await metered.complete(call.parentRunId, call.callId, result);
      // The claim, then the completion: each one unit on the table (the index's keys aside).
      expect(tableUnits).toEqual([1, 1]);
      expect((await calls.get(call.parentRunId, call.callId))?.result).toEqual(result);
    } finally {
      own.destroy();
    }
  });

  it("stores a long refusal deflated when a waiting call is cancelled or refused", async () => {
    const refusal = longRefusal();

    const waiting = newCall();
    await calls.create(waiting);
    const cancelled = await calls.cancel(waiting.parentRunId, waiting.callId, refusal);
    expect(cancelled).toMatchObject({ outcome: "cancelled", call: { result: refusal } });
    expect(forms(await rawItem(waiting))).toEqual(["inputJson", "resultZ"]);
    expect((await calls.get(waiting.parentRunId, waiting.callId))?.result).toEqual(refusal);

    const asking = newCall({
      status: "awaiting_approval",
      approval: { requestedAt: "2026-01-01T00:00:01.000Z", expiresAt: LATER },
    });
    await calls.create(asking);
    const refused = await calls.decide(
      asking.parentRunId,
      asking.callId,
      { approved: false, at: "2026-01-01T00:00:02.000Z" },
      refusal,
    );
    expect(refused).toMatchObject({ status: "failed", result: refusal });
    expect(forms(await rawItem(asking))).toEqual(["inputJson", "resultZ"]);
  });
});

describe("the recorder's mark on a call", () => {
  it("logs and marks a result stored deflated", async () => {
    const call = await finished(newCall({ parentRunId: "run-marked" }), searchResult());
    expect(forms(await rawItem(call))).toContain("resultZ");
    await log.append(call, [scheduled(call), resulted(call)]);
    const marked = await calls.get(call.parentRunId, call.callId);
    expect(marked).toMatchObject({ scheduledLogSeq: 1, resultLogSeq: 2, result: call.result });
    expect(marked?.resultPublishedAt).toBeDefined();
  });

  it("logs and marks a result stored as text, as earlier releases wrote it", async () => {
    const call = {
      ...newCall({ parentRunId: "run-text" }),
      status: "succeeded" as const,
      result: searchResult(),
    };
    const { result } = call;
    await putAsText(call, { gsi2pk: "UNANNOUNCED", gsi2sk: result.completedAt });
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(call);
    await log.append(call, [scheduled(call), resulted(call)]);
    expect(await calls.get(call.parentRunId, call.callId)).toMatchObject({
      resultLogSeq: 2,
      result,
    });
    const unannounced = await calls.listUnannounced(LATER, 1000);
    expect(unannounced.some((c) => c.callId === call.callId)).toBe(false);
  });

  it("refuses to log a result the stored call does not hold, and writes nothing", async () => {
    const call = newCall({ parentRunId: "run-stale", status: "running", deadlineAt: DEADLINE });
    await calls.create(call);
    // A record claiming a result the item does not have: only the transaction's condition knows.
    const claimed = { ...call, status: "succeeded" as const, result: searchResult() };
    await expect(log.append(claimed, [resulted(claimed)])).rejects.toBeInstanceOf(ValidationError);
    expect((await log.read("run-stale")).events).toEqual([]);
    expect(await calls.get(call.parentRunId, call.callId)).toEqual(call);
  });
});

const SCHEDULED = "2026-01-01T00:00:01.000Z";
const TEXT =
  "Toolbus serves optional tools to AI agents. Every call is announced on the bus, run by its own handler, and recorded under the run that asked for it.";

/** A direct call as the API makes it for a waiting caller: claimed as made, traced. */
const directCall = (parentRunId: string, callId: string, traceId: string): CallRecord => ({
  parentRunId,
  callId,
  toolId: "readability_analyzer",
  toolset: "text_analysis",
  toolVersion: "1",
  implementation: "builtin",
  input: { text: TEXT },
  inputHash: inputHashOf({ text: TEXT }),
  requestedBy: { id: "admin-bootstrap", role: "admin" },
  scheduledAt: SCHEDULED,
  status: "running",
  dispatch: "direct",
  startedAt: SCHEDULED,
  deadlineAt: "2026-01-01T00:00:36.000Z",
  mode: "default",
  trace: { traceId, parentId: "4bf92f3577b34da6", sampled: false },
});

async function rawAttributes(runId: string, callId: string) {
  const { Item } = await client.send(
    new GetItemCommand({
      TableName: table.tableName,
      Key: marshall({ pk: `RUN#${runId}`, sk: `CALL#${callId}` }),
      ConsistentRead: true,
    }),
  );
  if (!Item) throw new Error(`no item for ${callId}`);
  return Item as Record<string, AttributeValue>;
}

/** What a compact call item leaves out: its keys, its input and its scheduling give them back. */
const DERIVABLE = ["parentRunId", "callId", "scheduledAt", "startedAt", "inputHash"];

/**
 * The call's item whole, as the release before this one wrote it (input and result deflated
 * where smaller), on the in-flight index where its status puts it.
 */
async function putWhole(call: CallRecord) {
  const index =
    call.status === "running" && call.deadlineAt !== undefined
      ? { gsi2pk: RUNNING_PARTITION, gsi2sk: call.deadlineAt }
      : call.status === "pending"
        ? { gsi2pk: PENDING_PARTITION, gsi2sk: call.scheduledAt }
        : {};
  const whole = { ...callKey(call.parentRunId, call.callId), ...call, ...traceIndexKey(call) };
  await documents.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { ...encodeJsonFields(whole, JSON_FIELDS, { compress: true }), ...index },
    }),
  );
}

/** A call written by this release (compact), or whole by the release before. */
const writers = {
  compact: async (call: CallRecord) => {
    expect((await calls.create(call)).created).toBe(true);
  },
  whole: putWhole,
} as const;

/**
 * Call items without the fields their keys and input repeat (call-item-form.ts): this release
 * writes them, and reads them, and the whole items earlier releases wrote, on every path.
 */
describe("compact call items", () => {
  it("are what this release writes: a call created, completed and marked by the log", async () => {
    const made = directCall("run-written", "call-1", randomBytes(16).toString("hex"));
    await calls.create(made);
    const compact = (stored: Record<string, AttributeValue>) => {
      for (const field of DERIVABLE) expect(stored, field).not.toHaveProperty(field);
      expect(stored.trace?.M).not.toHaveProperty("traceId");
    };
    compact(await rawAttributes("run-written", "call-1"));
    const done = await calls.complete("run-written", "call-1", succeededResult());
    if (!done) throw new Error("not completed");
    compact(await rawAttributes("run-written", "call-1"));
    await log.append(done, [scheduledEvent(done), resultEvent(done)]);
    compact(await rawAttributes("run-written", "call-1"));
  });

  it.each(Object.keys(writers) as (keyof typeof writers)[])(
    "are read whole on every path, as are %s items: get, the trace index, the in-flight index, completion and the log's marks",
    async (form) => {
      const runId = `run-paths-${form}`;
      const traceId = randomBytes(16).toString("hex");
      const made = directCall(runId, "call-1", traceId);
      await writers[form](made);
      const stored = await rawAttributes(runId, "call-1");
      for (const field of DERIVABLE) {
        if (form === "whole") expect(stored, field).toHaveProperty(field);
        else expect(stored, field).not.toHaveProperty(field);
      }

      expect(await calls.get(runId, "call-1")).toEqual(made);
      expect(await calls.listByTrace(traceId)).toEqual([made]);
      expect(
        (await calls.listStuck("2099-01-01T00:00:00.000Z")).filter(
          (call) => call.parentRunId === runId,
        ),
      ).toEqual([made]);
      const done = await calls.complete(runId, "call-1", succeededResult());
      expect(done).toMatchObject({ ...made, status: "succeeded" });

      if (!done) throw new Error("not completed");
      await log.append(done, [scheduledEvent(done), resultEvent(done)]);
      const logged = await calls.get(runId, "call-1");
      expect(logged).toMatchObject({
        parentRunId: runId,
        callId: "call-1",
        scheduledAt: SCHEDULED,
        startedAt: SCHEDULED,
        inputHash: made.inputHash,
        scheduledLogSeq: 1,
        resultLogSeq: 2,
      });
      expect(logged?.resultPublishedAt).toBeDefined();
      expect(logged?.trace?.traceId).toBe(traceId);
    },
  );

  it.each(Object.keys(writers) as (keyof typeof writers)[])(
    "give a %s call the bus claims its own start, and a same-id create the existing call whole",
    async (form) => {
      const runId = `run-bus-${form}`;
      const pending: CallRecord = {
        ...directCall(runId, "call-1", randomBytes(16).toString("hex")),
        status: "pending",
      };
      delete pending.dispatch;
      delete pending.startedAt;
      delete pending.deadlineAt;
      await writers[form](pending);
      const again = await calls.create(pending);
      expect(again).toEqual({ created: false, call: pending });
      const claimed = await calls.claim(runId, "call-1", "2099-01-01T00:00:00.000Z");
      expect(claimed?.scheduledAt).toBe(SCHEDULED);
      expect(claimed?.startedAt).toBeDefined();
      expect(claimed?.startedAt).not.toBe(SCHEDULED);
      expect(await calls.get(runId, "call-1")).toEqual(claimed);
    },
  );

  it("takes a small call's item under 1 KB, where whole it is over", async () => {
    const result = succeededResult({ output: randomBytes(260).toString("base64") });
    for (const [form, callId] of [
      ["whole", "call-whole"],
      ["compact", "call-compact"],
    ] as const) {
      const call = directCall("run-size", callId, randomBytes(16).toString("hex"));
      await writers[form](call);
      await calls.complete("run-size", callId, result);
    }
    const whole = itemBytes(await rawAttributes("run-size", "call-whole"));
    const compact = itemBytes(await rawAttributes("run-size", "call-compact"));
    // Per started KB: a completion and each of the log transaction's two writes of the item
    // take one unit each instead of two.
    expect(whole).toBeGreaterThan(1_024);
    expect(compact).toBeLessThanOrEqual(1_024);
    // The two times, the input's hash and the trace id (about 170 bytes with their names), and
    // the ids.
    expect(whole - compact).toBeGreaterThan(200);
  });
});
