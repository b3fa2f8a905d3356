import { randomBytes } from "node:crypto";
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { parseStageConfig } from "../packages/core/src/config";
import type { Deployment } from "../packages/core/src/deployment";
import {
  appendAsSoleWriter,
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
  storeOptions,
} from "../packages/core/src/store/dynamodb";
import { callItem } from "../packages/core/src/store/dynamodb/call-runs";
import { DynamoEventStream } from "../packages/core/src/store/dynamodb/event-stream";
import {
  STREAM_HEAD_KEY,
  STREAM_PARTITION_SIZE,
  streamChunkKey,
} from "../packages/core/src/store/dynamodb/items";
import { putStreamed } from "../packages/core/src/store/dynamodb/log-sole-stream";
import type { CallRecord } from "../packages/wire/src/model/call";
import type { RunEvent } from "../packages/wire/src/model/events";
import { finishedCall, resultEvent, scheduledEvent } from "./support/calls";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * The stage stream as the only writer of a table (`npm start`) feeds it: each append's chunk
 * goes out in the same request as the run-log entries holding its events, and what a crash
 * cuts out of such a request is made good by the next process, so the stream holds each
 * logged event once, each run's in the order it was logged. On DynamoDB Local, each test on a
 * table of its own (places start at 1).
 */
const client = testDynamoDbClient();
const documents = createDocumentClient(client);
const tables: TestTable[] = [];

afterAll(async () => {
  for (const table of tables) await table.drop();
  client.destroy();
});

async function freshTable(): Promise<string> {
  const table = await createToolbusTestTable(client, "sole-stream");
  tables.push(table);
  return table.tableName;
}

const config = parseStageConfig({});
/** An item as a BatchWriteItem's middleware sees it: as given, or marshalled. */
type Put = Record<string, unknown>;
const keyOf = (item: Put, name: string) => {
  const value = item[name];
  return String(typeof value === "string" ? value : (value as AttributeValue | undefined)?.S);
};

/**
 * A process that alone writes the table: its own client, so its own memory of runs and of the
 * stream's end. `cut` keeps only the items of its next BatchWriteItem that it lets through and
 * then fails it, as a crash after part of a request landed leaves the table. `lateNext` has its
 * next BatchWriteItem time out for the writer and land later, as a request the SDK gave up on
 * while it sat in the server's queue.
 */
function soleWriter(tableName: string, now?: string) {
  const own = testDynamoDbClient();
  const sent: string[] = [];
  const batches: string[][] = [];
  let cut: ((item: Put) => boolean) | undefined;
  let lateBy: number | undefined;
  const late: Promise<unknown>[] = [];
  own.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push(String(context.commandName));
      if (context.commandName !== "BatchWriteItemCommand") return next(args);
      const input = args.input as {
        RequestItems: Record<string, { PutRequest?: { Item?: Put } }[]>;
      };
      const requests = input.RequestItems[tableName] ?? [];
      batches.push(requests.map((request) => keyOf(request.PutRequest?.Item ?? {}, "sk")));
      if (lateBy !== undefined) {
        const ms = lateBy;
        lateBy = undefined;
        late.push(new Promise((resolve) => setTimeout(resolve, ms)).then(() => next(args)));
        throw Object.assign(new Error("no answer within the request timeout"), {
          name: "TimeoutError",
        });
      }
      const keep = cut;
      if (!keep) return next(args);
      cut = undefined;
      const kept = requests.filter((request) => keep(request.PutRequest?.Item ?? {}));
      if (kept.length > 0) await next({ ...args, input: { RequestItems: { [tableName]: kept } } });
      throw new Error("the process stopped here");
    },
    { step: "initialize", name: "soleWriterProbe" },
  );
  const options = {
    ...storeOptions({
      dynamodb: own,
      tableName,
      appendLog: appendAsSoleWriter,
      config,
    } as Deployment),
    ...(now ? { now: () => new Date(now) } : {}),
  };
  return {
    sent,
    batches,
    log: new DynamoEventLog(options),
    cutNext(keep: (item: Put) => boolean) {
      cut = keep;
    },
    lateNext(ms: number) {
      lateBy = ms;
    },
    /** Once every late request has landed. */
    landed: () => Promise.all(late),
    stop: () => own.destroy(),
  };
}

const isChunk = (item: Put) => keyOf(item, "pk").startsWith("STREAM#");

function recorded(tableName: string) {
  const options = { client: documents, tableName };
  const calls = new DynamoCallStore(options);
  return {
    call: (runId: string, callId: string) => finishedCall(calls, { parentRunId: runId, callId }),
    calls,
    log: new DynamoEventLog(options),
    stream: new DynamoEventStream(options, config.stream),
  };
}

const both = (call: CallRecord): RunEvent[] => [scheduledEvent(call), resultEvent(call)];
const keysOf = (events: RunEvent[]) => events.map((event) => event.eventKey);

async function streamed(stream: DynamoEventStream): Promise<{ seq: number; key: string }[]> {
  const { entries } = await stream.read(0, 1_000_000);
  return entries.map((entry) => ({ seq: entry.seq, key: entry.event.eventKey }));
}

/** Run 1's log and the stage stream hold exactly these events, once each, in this order. */
async function expectOnceInOrder(table: ReturnType<typeof recorded>, events: RunEvent[]) {
  const keys = keysOf(events);
  expect(keysOf((await table.log.read("run-1")).events)).toEqual(keys);
  expect(await streamed(table.stream)).toEqual(keys.map((key, index) => ({ seq: index + 1, key })));
}

describe("the stage stream fed by the only writer of its table", () => {
  it("puts a call's log entry, its mark and the stream's chunk in one request", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b] = await Promise.all([table.call("run-1", "a"), table.call("run-1", "b")]);
    const writer = soleWriter(tableName);
    try {
      await writer.log.append(a, both(a));
      writer.sent.length = 0;
      writer.batches.length = 0;
      await writer.log.append(b, both(b));
      expect(writer.sent).toEqual(["BatchWriteItemCommand"]);
      // The chunk holding places 3..4 first, then b's events in one entry at 3..4, its mark.
      expect(writer.batches).toEqual([
        [`C#${"3".padStart(16, "0")}`, `LOG#${"3".padStart(16, "0")}`, "CALL#b"],
      ]);
    } finally {
      writer.stop();
    }
    await expectOnceInOrder(table, [...both(a), ...both(b)]);
    expect((await table.calls.get("run-1", "b"))?.resultPublishedAt).toBeDefined();
  });

  it("goes on where the stream ends after a restart, using no place twice", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b] = await Promise.all([table.call("run-1", "a"), table.call("run-2", "b")]);
    for (const call of [a, b]) {
      const writer = soleWriter(tableName);
      try {
        await writer.log.append(call, both(call));
        // Delivered again (the bus after a restart): logged and streamed once.
        await writer.log.append(call, both(call));
      } finally {
        writer.stop();
      }
    }
    expect(await streamed(table.stream)).toEqual(
      [...both(a), ...both(b)].map((event, index) => ({ seq: index + 1, key: event.eventKey })),
    );
  });

  it("streams entries whose chunk a crash cut off before anything more of their run, once", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b, c, d] = await Promise.all([
      table.call("run-1", "a"),
      table.call("run-1", "b"),
      table.call("run-1", "c"),
      table.call("run-2", "d"),
    ]);
    const before = soleWriter(tableName);
    try {
      await before.log.append(a, both(a));
      // b's entry and mark land, its chunk does not; then the process stops.
      before.cutNext((item) => !isChunk(item));
      await expect(before.log.append(b, both(b))).rejects.toThrow();
    } finally {
      before.stop();
    }
    expect(keysOf((await table.log.read("run-1")).events)).toEqual(
      keysOf([...both(a), ...both(b)]),
    );
    expect((await streamed(table.stream)).map((entry) => entry.key)).toEqual(keysOf(both(a)));

    const after = soleWriter(tableName);
    try {
      // Another run first: the stream goes on past the place the lost chunk had.
      await after.log.append(d, both(d));
      // The bus delivers b's events again (logged already), then c's.
      await after.log.append(b, both(b));
      await after.log.append(c, both(c));
      // A third process finds b's entries streamed now: nothing is streamed again.
      const third = soleWriter(tableName);
      try {
        await third.log.append(b, both(b));
      } finally {
        third.stop();
      }
    } finally {
      after.stop();
    }
    const stream = await streamed(table.stream);
    expect(stream.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(stream.map((entry) => entry.key)).toEqual(
      keysOf([...both(a), ...both(d), ...both(b), ...both(c)]),
    );
    expect(keysOf((await table.log.read("run-1")).events)).toEqual(
      keysOf([...both(a), ...both(b), ...both(c)]),
    );
  });

  it("streams entries whose lost chunk left no place taken, and never again one whose chunk expired", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b] = await Promise.all([table.call("run-1", "a"), table.call("run-2", "b")]);
    // The calls' events occurred on January 1st; the stream keeps them 7 days.
    const soon = "2026-01-01T00:01:00.000Z";
    const before = soleWriter(tableName, soon);
    try {
      // The first chunk ever is lost: no chunk takes its place before a's run is read again.
      before.cutNext((item) => !isChunk(item));
      await expect(before.log.append(a, both(a))).rejects.toThrow();
    } finally {
      before.stop();
    }
    const after = soleWriter(tableName, soon);
    try {
      await after.log.append(a, both(a));
      await after.log.append(b, both(b));
    } finally {
      after.stop();
    }
    expect((await streamed(table.stream)).map((entry) => entry.key)).toEqual(
      keysOf([...both(a), ...both(b)]),
    );
    // b's chunk expires; a month later its events are delivered again.
    const { entries } = await table.stream.read(0, 1_000_000);
    const first = entries.find((entry) => entry.event.eventKey === scheduledEvent(b).eventKey);
    if (!first) throw new Error("b was not streamed");
    await documents.send(
      new DeleteCommand({ TableName: tableName, Key: streamChunkKey(first.seq) }),
    );
    const later = soleWriter(tableName, "2026-02-01T00:00:00.000Z");
    try {
      await later.log.append(b, both(b));
    } finally {
      later.stop();
    }
    expect((await streamed(table.stream)).map((entry) => entry.key)).toEqual(keysOf(both(a)));
  });

  it("puts again the entries of a chunk that landed without them, so nothing is streamed twice", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b, c] = await Promise.all([
      table.call("run-1", "a"),
      table.call("run-1", "b"),
      table.call("run-1", "c"),
    ]);
    const before = soleWriter(tableName);
    try {
      await before.log.append(a, both(a));
      // Only b's chunk lands: its entry and its mark do not.
      before.cutNext(isChunk);
      await expect(before.log.append(b, both(b))).rejects.toThrow();
    } finally {
      before.stop();
    }
    expect(keysOf((await table.log.read("run-1")).events)).toEqual(keysOf(both(a)));

    const after = soleWriter(tableName);
    try {
      // The call is still on the outbox: announced again, its events come back, then c's.
      await after.log.append(b, both(b));
      await after.log.append(c, both(c));
    } finally {
      after.stop();
    }
    await expectOnceInOrder(table, [...both(a), ...both(b), ...both(c)]);
    expect((await table.calls.get("run-1", "b"))?.resultPublishedAt).toBeDefined();
  });

  it("streams a call whose events do not fit one chunk an entry to a request, each with its chunk", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    // Incompressible text: the call's input and its result, 160 KB each, over one chunk's bytes.
    const big = (bytes: number) => randomBytes(bytes).toString("base64").slice(0, bytes);
    const [a, b] = await Promise.all([
      table.call("run-1", "a"),
      finishedCall(table.calls, {
        parentRunId: "run-1",
        callId: "b",
        input: { query: big(160_000) },
      }),
    ]);
    const events = [scheduledEvent(b), resultEvent(b, { output: big(160_000) })];
    const writer = soleWriter(tableName);
    try {
      await writer.log.append(a, both(a));
      writer.batches.length = 0;
      await writer.log.append(b, events);
      // One request an entry, its chunk first; the mark with the last.
      expect(writer.batches).toEqual([
        [`C#${"3".padStart(16, "0")}`, `LOG#${"3".padStart(16, "0")}`],
        [`C#${"4".padStart(16, "0")}`, `LOG#${"4".padStart(16, "0")}`, "CALL#b"],
      ]);
    } finally {
      writer.stop();
    }
    await expectOnceInOrder(table, [...both(a), ...events]);
    expect((await table.calls.get("run-1", "b"))?.resultPublishedAt).toBeDefined();
  });

  it("reads the table again only once a request that timed out can no longer land over what follows", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const [a, b, c] = await Promise.all([
      table.call("run-1", "a"),
      table.call("run-1", "b"),
      table.call("run-1", "c"),
    ]);
    const writer = soleWriter(tableName);
    try {
      await writer.log.append(a, both(a));
      // b's request gets no answer, and lands 1.5 s later.
      writer.lateNext(1_500);
      await expect(writer.log.append(b, both(b))).rejects.toThrow();
      // Read right away, the table would give b's places to c, for b's late request to
      // overwrite: c's events would be gone from the log and the stream.
      await writer.log.append(c, both(c));
      await writer.landed();
      // b's events come back (the bus delivers again) and are found logged.
      await writer.log.append(b, both(b));
    } finally {
      writer.stop();
    }
    await expectOnceInOrder(table, [...both(a), ...both(b), ...both(c)]);
  });

  it("takes no place for a request with no events, even where a partition ends", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const last = STREAM_PARTITION_SIZE - 1;
    const a = await table.call("run-1", "a");
    const options = storeOptions({
      dynamodb: client,
      tableName,
      appendLog: appendAsSoleWriter,
      config,
    } as Deployment);
    const tail = { seq: last, at: 0, partition: 0 };
    // A call's mark alone: its events were logged before a crash cut the mark off.
    await putStreamed(options, tail, [
      { entries: [], others: [callItem({ ...a, resultPublishedAt: "x" })] },
    ]);
    expect(tail.seq).toBe(last);
    const { Item: filler } = await documents.send(
      new GetCommand({ TableName: tableName, Key: streamChunkKey(last + 1) }),
    );
    expect(filler).toBeUndefined();
    expect((await table.calls.get("run-1", "a"))?.resultPublishedAt).toBe("x");
  });

  it("fills what is left of a partition and goes on in the next, named first", async () => {
    const tableName = await freshTable();
    const table = recorded(tableName);
    const last = STREAM_PARTITION_SIZE - 1;
    const [a, b] = await Promise.all([table.call("run-1", "a"), table.call("run-1", "b")]);
    const writer = soleWriter(tableName);
    try {
      await writer.log.append(a, both(a));
    } finally {
      writer.stop();
    }
    // Moved to end one place before the partition does, as a stream 99,998 places long would.
    const { Item: chunk } = await documents.send(
      new GetCommand({ TableName: tableName, Key: streamChunkKey(1) }),
    );
    if (!chunk) throw new Error("no chunk");
    await documents.send(new DeleteCommand({ TableName: tableName, Key: streamChunkKey(1) }));
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...chunk, ...streamChunkKey(last - 2), firstSeq: last - 2, lastSeq: last - 1 },
      }),
    );
    const next = soleWriter(tableName);
    try {
      await next.log.append(b, both(b));
    } finally {
      next.stop();
    }
    const { entries } = await table.stream.read(last - 3, 10);
    expect(entries.map((entry) => [entry.seq, entry.event.eventKey])).toEqual([
      [last - 2, scheduledEvent(a).eventKey],
      [last - 1, resultEvent(a).eventKey],
      [last + 1, scheduledEvent(b).eventKey],
      [last + 2, resultEvent(b).eventKey],
    ]);
    const { Item: head } = await documents.send(
      new GetCommand({ TableName: tableName, Key: STREAM_HEAD_KEY }),
    );
    expect(head?.partition).toBe(1);
    expect(await table.stream.head()).toBe(last + 2);
  });
});
