import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStageConfig } from "../packages/core/src/config";
import type { Deployment } from "../packages/core/src/deployment";
import { ValidationError } from "../packages/core/src/errors";
import {
  appendAsSoleWriter,
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
  encodeCursor,
  storeOptions,
} from "../packages/core/src/store/dynamodb";
import type { CallRecord } from "../packages/wire/src/model/call";
import type { RunEvent } from "../packages/wire/src/model/events";
import {
  finishedCall as recordFinished,
  resultEvent,
  scheduledEvent,
  succeededResult,
} from "./support/calls";
import {
  createToolbusTestTable,
  storedRunLog,
  type TestTable,
  testDynamoDbClient,
} from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let log: DynamoEventLog;
let calls: DynamoCallStore;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-events");
  log = new DynamoEventLog({ client: documents, tableName: table.tableName });
  calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const result = succeededResult();
const finishedCall = (runId: string, callId: string) =>
  recordFinished(calls, { parentRunId: runId, callId });

const scheduled = scheduledEvent;
const resulted = (call: CallRecord) => resultEvent(call, { occurredAt: result.completedAt });

const keys = (events: RunEvent[]) => events.map((item) => item.eventKey);

/** The sort keys of a run's entries as stored: the sequence itself. */
async function storedPlaces(runId: string): Promise<string[]> {
  return (await storedRunLog(documents, table.tableName, runId)).map((item) => String(item.sk));
}

const places = (count: number) =>
  Array.from({ length: count }, (_, index) => `LOG#${String(index + 1).padStart(16, "0")}`);

async function readAll(reader: DynamoEventLog, runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await reader.read(runId, { cursor, limit: 1000 });
    if (page.events.length === 0) return events;
    events.push(...page.events);
    cursor = page.cursor;
  }
}

describe("DynamoEventLog", () => {
  it("logs each of a call's events once, reads them back unchanged, and marks the call", async () => {
    const call = await finishedCall("run-once", "call-1");
    await log.append(call, [scheduled(call)]);
    // A redelivery with the record the recorder had before: the log keeps one entry.
    await log.append(call, [scheduled(call)]);
    await log.append(call, [scheduled(call), resulted(call)]);

    expect((await log.read("run-once")).events).toEqual([scheduled(call), resulted(call)]);
    expect(await storedPlaces("run-once")).toEqual(places(2));
    const marked = await calls.get("run-once", "call-1");
    expect(marked).toMatchObject({ scheduledLogSeq: 1, resultLogSeq: 2 });
    expect(marked?.resultPublishedAt).toBeDefined();
  });

  it("takes a call off the outbox once its result is in the log, not before", async () => {
    const call = await finishedCall("run-outbox", "call-1");
    const later = "2100-01-01T00:00:00.000Z";
    // A call that ran is on the index where it ran (RUNNING) until its result is logged.
    const onOutbox = async () =>
      (await calls.listStuck(later, 1000)).some((c) => c.callId === call.callId);
    await log.append(call, [scheduled(call)]);
    expect(await onOutbox()).toBe(true);
    await log.append(call, [resulted(call)]);
    expect(await onOutbox()).toBe(false);
  });

  it("refuses to log a result for a call that has none, and writes nothing", async () => {
    await calls.create({
      parentRunId: "run-early",
      callId: "call-1",
      toolId: "web_search",
      toolset: "research",
      toolVersion: "1",
      input: {},
      inputHash: "h",
      status: "pending",
      requestedBy: { id: "tester", role: "member" },
      scheduledAt: "2026-01-01T00:00:01.000Z",
    });
    const pending = await calls.get("run-early", "call-1");
    if (!pending) throw new Error("not created");
    await expect(log.append(pending, [resulted(pending)])).rejects.toBeInstanceOf(ValidationError);
    expect(await storedPlaces("run-early")).toEqual([]);
  });

  it("refuses events of a call that was never recorded", async () => {
    const ghost = { ...(await finishedCall("run-ghost", "call-1")), callId: "call-missing" };
    await expect(log.append(ghost, [scheduled(ghost)])).rejects.toBeInstanceOf(ValidationError);
    expect(await storedPlaces("run-ghost")).toEqual([]);
  });

  it("keeps a detail with numbers DynamoDB cannot hold, after entries earlier versions stored", async () => {
    const run = "run-wide";
    const call = await finishedCall(run, "call-wide");
    const wide = scheduled(call);
    wide.detail = {
      ...wide.detail,
      input: JSON.parse('{"n": 123456789012345678901234567890, "x": 1e300}'),
    };
    // As earlier versions wrote an event: keyed by its time, the detail a map.
    const legacy = { ...scheduled(call), eventKey: `${run}/call-legacy/scheduled` };
    await documents.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: `RUN#${run}`, sk: `EVENT#${legacy.occurredAt}#${legacy.eventKey}`, ...legacy },
      }),
    );
    await log.append(call, [wide]);
    const first = await log.read(run, { limit: 1 });
    expect(first.events).toEqual([legacy]);
    expect((await log.read(run, { cursor: first.cursor })).events).toEqual([wide]);
  });

  it("gives appends arriving together, duplicates among them, one place each with no gap", async () => {
    const run = "run-together";
    const all = await Promise.all(
      Array.from({ length: 40 }, (_, i) => finishedCall(run, `call-${i}`)),
    );
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const call = all[i % 40] as CallRecord;
        return log.append(call, [scheduled(call)]);
      }),
    );
    const events = await readAll(log, run);
    expect(events).toHaveLength(40);
    expect(new Set(keys(events)).size).toBe(40);
    expect(await storedPlaces(run)).toEqual(places(40));
  });

  it("keeps places unique across writers that do not share memory, as Lambda recorders", async () => {
    const run = "run-writers";
    const all = await Promise.all(
      Array.from({ length: 30 }, (_, i) => finishedCall(run, `call-${i}`)),
    );
    // Each writer its own client: its own idea of where the run ends, as separate processes.
    const writers = Array.from({ length: 3 }, () => {
      const own = testDynamoDbClient();
      return {
        own,
        log: new DynamoEventLog({ client: createDocumentClient(own), tableName: table.tableName }),
      };
    });
    try {
      await Promise.all(
        all.flatMap((call, i) => [
          (writers[i % 3] as (typeof writers)[0]).log.append(call, [scheduled(call)]),
          // The same result through two writers at once: one entry.
          (writers[(i + 1) % 3] as (typeof writers)[0]).log.append(call, [resulted(call)]),
          (writers[(i + 2) % 3] as (typeof writers)[0]).log.append(call, [resulted(call)]),
        ]),
      );
    } finally {
      for (const writer of writers) writer.own.destroy();
    }
    const events = await readAll(log, run);
    expect(events).toHaveLength(60);
    expect(new Set(keys(events)).size).toBe(60);
    expect(await storedPlaces(run)).toEqual(places(60));
  });

  it("reads in the order events were logged, whatever times they describe", async () => {
    const run = "run-ordered";
    const [a, b] = await Promise.all([finishedCall(run, "call-a"), finishedCall(run, "call-b")]);
    if (!a || !b) throw new Error("not recorded");
    const late = { ...scheduled(b), occurredAt: "2026-01-01T00:00:30.000Z" };
    await log.append(b, [late]);
    await log.append(a, [scheduled(a)]);
    const other = await finishedCall("run-other", "call-x");
    await log.append(other, [scheduled(other)]);

    expect(keys((await log.read(run)).events)).toEqual([late.eventKey, scheduled(a).eventKey]);
  });

  it("never lets a reader pass a place that is still empty", async () => {
    const run = "run-gap";
    const entry = (seq: number) => ({
      pk: `RUN#${run}`,
      sk: `LOG#${String(seq).padStart(16, "0")}`,
      eventKey: `${run}/e${seq}`,
      detailType: "ToolCallScheduled",
      occurredAt: "2026-01-01T00:00:01.000Z",
      detail: {},
    });
    const put = (seq: number) =>
      documents.send(new PutCommand({ TableName: table.tableName, Item: entry(seq) }));
    await put(1);
    await put(3);
    const first = await log.read(run);
    expect(keys(first.events)).toEqual([`${run}/e1`]);
    // The place fills (the transaction that held it lands): the reader gets both, in order.
    await put(2);
    expect(keys((await log.read(run, { cursor: first.cursor })).events)).toEqual([
      `${run}/e2`,
      `${run}/e3`,
    ]);
  });

  it("keeps a long detail deflated, and reads entries kept as text the same", async () => {
    const run = "run-deflated";
    const [a, b, c] = await Promise.all([
      finishedCall(run, "call-a"),
      finishedCall(run, "call-b"),
      finishedCall(run, "call-c"),
    ]);
    if (!a || !b || !c) throw new Error("not recorded");
    const long = (call: CallRecord): RunEvent => ({
      ...resulted(call),
      detail: { ...resulted(call).detail, output: "Flesch reading ease 91.4. ".repeat(40) },
    });
    // Appended one at a time, each event is an entry of its own (its detail under detail*).
    await log.append(a, [scheduled(a)]);
    await log.append(a, [long(a)]);
    // Appended together, a call's events share one entry: their JSON, long, under events*.
    await log.append(c, [scheduled(c), long(c)]);
    // An entry as writers before this kept every detail: JSON text.
    const { detail, ...rest } = long(b);
    await documents.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: `RUN#${run}`, sk: places(5)[4], ...rest, detailJson: JSON.stringify(detail) },
      }),
    );
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :log)",
        ExpressionAttributeValues: { ":pk": `RUN#${run}`, ":log": "LOG#" },
        ConsistentRead: true,
      }),
    );
    // The scheduling's short detail stays text; the result's long one, and the shared entry's
    // long JSON, are stored deflated.
    expect(
      Items.map((item) => [
        item.sk,
        Object.keys(item).filter((name) => /^(detail|events)(Json|Z)$/.test(name)),
      ]),
    ).toEqual([
      [places(5)[0], ["detailJson"]],
      [places(5)[1], ["detailZ"]],
      [places(5)[2], ["eventsZ"]],
      [places(5)[4], ["detailJson"]],
    ]);
    expect((await log.read(run)).events).toEqual([
      scheduled(a),
      long(a),
      scheduled(c),
      long(c),
      long(b),
    ]);
  });

  it("pages through a run with the cursor, without gaps or repeats", async () => {
    const run = "run-paged";
    const all: RunEvent[] = [];
    for (let index = 0; index < 7; index++) {
      const call = await finishedCall(run, `call-${index}`);
      await log.append(call, [scheduled(call)]);
      all.push(scheduled(call));
    }
    const seen: RunEvent[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 4; pages += 1) {
      const page = await log.read(run, { cursor, limit: 3 });
      seen.push(...page.events);
      expect(page.events.length).toBeLessThanOrEqual(3);
      cursor = page.cursor;
    }
    expect(keys(seen)).toEqual(keys(all));
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("returns a cursor on the last page that lets a follower see a later append", async () => {
    const run = "run-followed";
    const call = await finishedCall(run, "call-1");
    await log.append(call, [scheduled(call)]);
    const first = await log.read(run);
    expect(first.cursor).toBeDefined();

    const idle = await log.read(run, { cursor: first.cursor });
    expect(idle).toEqual({ events: [], cursor: first.cursor });

    await log.append(call, [resulted(call)]);
    const next = await log.read(run, { cursor: idle.cursor });
    expect(next.events).toEqual([resulted(call)]);
    expect(next.cursor).not.toBe(first.cursor);
  });

  it("has no cursor for a run with no events yet", async () => {
    expect(await log.read("run-empty")).toEqual({ events: [], cursor: undefined });
  });

  it("defaults to 100 events a page and caps a page at 1000", async () => {
    const run = "run-big";
    for (let start = 0; start < 1_005; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, 1_005 - start) }, async (_, offset) => {
          const call = await finishedCall(run, `call-${start + offset}`);
          await log.append(call, [scheduled(call)]);
        }),
      );
    }
    expect((await log.read(run)).events).toHaveLength(100);
    const capped = await log.read(run, { limit: 5_000 });
    expect(capped.events).toHaveLength(1_000);
    expect((await log.read(run, { cursor: capped.cursor, limit: 1_000 })).events).toHaveLength(5);
  });

  it.each([
    ["not base64url", "not a cursor!"],
    ["not an event position", encodeCursor("CALL#call-1")],
    ["a place that is not a number", encodeCursor("LOG#00000000000000x1")],
    ["not UTF-8 underneath", Buffer.from([0x45, 0x56, 0xff, 0xfe]).toString("base64url")],
    [
      "base64url with stray padding bits",
      "RVZFTlQjMjAyNi0wMS0wMVQwMDowMDowMS4wMDBaI3J1bi1vbmNlL2NhbGwtMS9zY2hlZHVsZWR",
    ],
    ["empty", ""],
  ])("rejects a cursor that is %s with ValidationError", async (_label, cursor) => {
    await expect(log.read("run-once", { cursor })).rejects.toBeInstanceOf(ValidationError);
  });

  it("rejects a page size that is not a positive integer", async () => {
    await expect(log.read("run-once", { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(log.read("run-once", { limit: 2.5 })).rejects.toBeInstanceOf(ValidationError);
  });

  it("rejects an event whose occurredAt is not a timestamp", async () => {
    const call = await finishedCall("run-bad", "call-1");
    const bad = { ...scheduled(call), occurredAt: "yesterday" };
    await expect(log.append(call, [bad])).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("the log of a process that alone writes its table (npm start)", () => {
  /** A sole writer with its own client: its own memory of runs, as a freshly started process. */
  function soleWriter() {
    const own = testDynamoDbClient();
    const sent: string[] = [];
    own.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: "initialize", name: "countCommands" },
    );
    const options = storeOptions({
      dynamodb: own,
      tableName: table.tableName,
      appendLog: appendAsSoleWriter,
      config: parseStageConfig({}),
    } as Deployment);
    return { own, sent, log: new DynamoEventLog(options) };
  }

  it("appends with plain puts, a call's entries and its mark in one batch, and logs each event once", async () => {
    const writer = soleWriter();
    try {
      const call = await finishedCall("run-sole", "call-1");
      await writer.log.append(call, [scheduled(call), resulted(call)]);
      // Where the stage stream ends and where the run ends are read once, and the stream's first
      // partition named; then one batch: the call's entry, its mark and the stream's chunk.
      expect(writer.sent).toEqual([
        "GetItemCommand",
        "QueryCommand",
        "UpdateItemCommand",
        "BatchWriteItemCommand",
      ]);
      // Delivered again (the bus, the recorder): nothing is written twice.
      await writer.log.append(call, [scheduled(call)]);
      await writer.log.append(call, [scheduled(call), resulted(call)]);
      expect(keys((await log.read("run-sole")).events)).toEqual([
        "run-sole/call-1/scheduled",
        "run-sole/call-1/result",
      ]);
      const later2 = "2100-01-01T00:00:00.000Z";
      const onOutbox = (await calls.listUnannounced(later2, 1000)).some(
        (c) => c.parentRunId === "run-sole",
      );
      expect(onOutbox).toBe(false);
      expect((await calls.get("run-sole", "call-1"))?.resultPublishedAt).toBeDefined();
    } finally {
      writer.own.destroy();
    }
  });

  it("after a crash cut a batch, fills the empty place for readers and logs what was lost at the end", async () => {
    const run = "run-cut";
    const [a, b, c] = await Promise.all(
      ["call-a", "call-b", "call-c"].map((id) => finishedCall(run, id)),
    );
    if (!a || !b || !c) throw new Error("not recorded");
    // What a batch cut short leaves: places 1 and 3 written, 2 (call-b's) not.
    for (const [seq, event] of [
      [1, scheduled(a)],
      [3, scheduled(c)],
    ] as const) {
      await documents.send(
        new PutCommand({
          TableName: table.tableName,
          Item: { pk: `RUN#${run}`, sk: `LOG#${String(seq).padStart(16, "0")}`, ...event },
        }),
      );
    }
    const reader = await log.read(run);
    expect(keys(reader.events)).toEqual([scheduled(a).eventKey]);

    const writer = soleWriter();
    try {
      // The bus delivers both again after the restart: c's is in the log already, b's is not.
      await writer.log.append(c, [scheduled(c)]);
      await writer.log.append(b, [scheduled(b)]);
    } finally {
      writer.own.destroy();
    }
    expect(await storedPlaces(run)).toEqual(places(4));
    // The waiting reader reads on past the filled place; nothing twice, nothing missed.
    const next = await log.read(run, { cursor: reader.cursor });
    expect(keys(next.events)).toEqual([scheduled(c).eventKey, scheduled(b).eventKey]);
    expect(keys((await log.read(run)).events)).toEqual(
      [a, c, b].map((call) => scheduled(call).eventKey),
    );
  });
});
