import { PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import { DynamoEventStream } from "../packages/core/src/store/dynamodb/event-stream";
import { STREAM_HEAD_KEY, streamChunkKey } from "../packages/core/src/store/dynamodb/items";
import type { RunEvent } from "../packages/wire/src/model/events";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * The stage-wide stream on DynamoDB Local: places handed out densely and in order, a head that
 * readers never pass, what a failed or racing writer leaves behind, and finding a place by time.
 * Each test has its own table, so places start at 1.
 */
const client = testDynamoDbClient();
const documents = createDocumentClient(client);
const tables: TestTable[] = [];

async function freshTable(): Promise<string> {
  const table = await createToolbusTestTable(client, "stream");
  tables.push(table);
  return table.tableName;
}

afterAll(async () => {
  for (const table of tables) await table.drop();
  client.destroy();
});

let counter = 0;
function event(run = "run-stream"): RunEvent {
  counter += 1;
  return {
    eventKey: `${run}/call-${counter}/scheduled`,
    detailType: "ToolCallScheduled",
    occurredAt: new Date().toISOString(),
    detail: { parentRunId: run, callId: `call-${counter}`, n: counter, text: "é\u0000𝄞" },
  };
}

/** A chunk as a writer leaves it: places first.. for the events given. */
async function putChunk(tableName: string, firstSeq: number, events: RunEvent[]) {
  await documents.send(
    new PutCommand({
      TableName: tableName,
      Item: {
        ...streamChunkKey(firstSeq),
        firstSeq,
        lastSeq: firstSeq + events.length - 1,
        eventsJson: JSON.stringify(events),
        recordedAt: new Date().toISOString(),
      },
    }),
  );
}

/** Counts the requests DynamoDB refuses on a condition, from now until stopped. */
function countRefusals() {
  const counter = {
    count: 0,
    stop: () => client.middlewareStack.remove("countRefusals"),
  };
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if ((error as Error).name === "ConditionalCheckFailedException") counter.count += 1;
        throw error;
      }
    },
    { step: "initialize", name: "countRefusals" },
  );
  return counter;
}

async function readAll(stream: DynamoEventStream, after = 0) {
  const entries = [];
  for (let place = after; ; ) {
    const page = await stream.read(place, 7);
    entries.push(...page.entries);
    if (page.through === place) return entries;
    place = page.through;
  }
}

describe("the stage's event stream", () => {
  let tableName: string;
  beforeAll(async () => {
    tableName = await freshTable();
  });

  it("gives concurrent appends dense places in one order, each event once", async () => {
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    const events = Array.from({ length: 450 }, () => event());
    // Many appends at once, as the local bus hands them over; one event twice.
    await Promise.all([
      ...events.map((one) => stream.append([one])),
      stream.append([events[3] as RunEvent]),
    ]);
    expect(await stream.head()).toBe(450);
    const entries = await readAll(stream);
    expect(entries.map((entry) => entry.seq)).toEqual(
      Array.from({ length: 450 }, (_, index) => index + 1),
    );
    expect(new Set(entries.map((entry) => entry.event.eventKey)).size).toBe(450);
    expect(
      entries.map((entry) => entry.event).sort((a, b) => a.eventKey.localeCompare(b.eventKey)),
    ).toEqual([...events].sort((a, b) => a.eventKey.localeCompare(b.eventKey)));
    // Recording times never go back along the stream.
    const times = entries.map((entry) => Date.parse(entry.recordedAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("reads in pages, never past the head", async () => {
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    const head = await stream.head();
    const page = await stream.read(head - 2, 100);
    expect(page.entries.map((entry) => entry.seq)).toEqual([head - 1, head]);
    expect(page.through).toBe(head);
    expect((await stream.read(head, 100)).entries).toEqual([]);
  });

  it("keeps a chunk's events deflated, and reads them back exactly", async () => {
    const table = await freshTable();
    const stream = new DynamoEventStream(
      { client: documents, tableName: table },
      { retentionDays: 7 },
    );
    const events = [event("run-deflated"), event("run-deflated")];
    await stream.append(events);
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": streamChunkKey(1).pk },
        ConsistentRead: true,
      }),
    );
    expect(Items).toHaveLength(1);
    expect(Items[0]?.eventsJson).toBeUndefined();
    expect(Items[0]?.eventsZ).toBeInstanceOf(Uint8Array);
    expect((await stream.read(0, 10)).entries.map((entry) => entry.event)).toEqual(events);
  });
});

describe("partitions", () => {
  it("splits a commit where a partition ends, and reads across it", async () => {
    const tableName = await freshTable();
    // A stream whose head sits just before the first partition's end (place 100,000).
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...STREAM_HEAD_KEY, seq: 99_997, at: new Date().toISOString() },
      }),
    );
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    const events = Array.from({ length: 6 }, () => event());
    await stream.append(events);
    expect(streamChunkKey(99_998).pk).not.toBe(streamChunkKey(100_000).pk);
    const page = await stream.read(99_997, 100);
    expect(page.entries.map((entry) => entry.seq)).toEqual([
      99_998, 99_999, 100_000, 100_001, 100_002, 100_003,
    ]);
    expect(page.entries.map((entry) => entry.event.eventKey).sort()).toEqual(
      events.map((one) => one.eventKey).sort(),
    );
    // Read from the middle of a chunk, on either side of the boundary.
    expect((await stream.read(99_998, 2)).entries.map((entry) => entry.seq)).toEqual([
      99_999, 100_000,
    ]);
    expect((await stream.read(100_001, 5)).entries.map((entry) => entry.seq)).toEqual([
      100_002, 100_003,
    ]);
  });
});

describe("a writer that fails or races", () => {
  it("makes entries a failed writer left past the head visible with its next commit, losing nothing", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event(), event()]);
    // A writer that died between its entries and moving the head left place 3 behind.
    const left = event();
    await putChunk(tableName, 3, [left]);
    expect((await stream.read(2, 10)).entries).toEqual([]);
    // Another process (its own client, so its own memory) takes over.
    const otherClient = testDynamoDbClient();
    try {
      const other = new DynamoEventStream(
        { client: createDocumentClient(otherClient), tableName },
        { retentionDays: 7 },
      );
      const next = event();
      await other.append([next]);
      const entries = (await other.read(0, 10)).entries;
      expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
      expect(entries[2]?.event.eventKey).toBe(left.eventKey);
      expect(entries[3]?.event.eventKey).toBe(next.eventKey);
    } finally {
      otherClient.destroy();
    }
  });

  it("takes back the chunk of a writer that lost the race for the head, and appends it again after the winner's", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event()]);
    // Another writer moved the head meanwhile (its entry at place 2).
    const theirs = event();
    await putChunk(tableName, 2, [theirs]);
    await documents.send(
      new UpdateCommand({
        TableName: tableName,
        Key: STREAM_HEAD_KEY,
        UpdateExpression: "SET seq = :seq",
        ExpressionAttributeValues: { ":seq": 2 },
      }),
    );
    // This writer still thinks the stream ends at place 1: its chunk for place 2 is refused
    // (theirs is there), so it reads where the stream stands and appends after theirs.
    const refusals = countRefusals();
    const mine = event();
    await stream.append([mine]);
    expect(refusals.count).toBeGreaterThan(0);
    refusals.stop();
    const after = (await stream.read(0, 10)).entries;
    expect(after.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(after.map((entry) => entry.event.eventKey).slice(1)).toEqual([
      theirs.eventKey,
      mine.eventKey,
    ]);
  });

  it("gives up after a few tries when the head keeps moving, leaving nothing of its own visible", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event()]);
    // Another writer that moves the head before every commit of this one.
    let seq = 1;
    const mine = event();
    const moving = testDynamoDbClient();
    moving.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: unknown };
        if (JSON.stringify(input.Key) === JSON.stringify(STREAM_HEAD_KEY)) {
          seq += 1;
          await documents.send(
            new UpdateCommand({
              TableName: tableName,
              Key: STREAM_HEAD_KEY,
              UpdateExpression: "SET seq = :seq",
              ExpressionAttributeValues: { ":seq": seq },
            }),
          );
        }
        return next(args);
      },
      { step: "initialize", name: "moveHead" },
    );
    try {
      const racing = new DynamoEventStream(
        { client: createDocumentClient(moving), tableName },
        { retentionDays: 7 },
      );
      await expect(racing.append([mine])).rejects.toThrow(/condition/i);
    } finally {
      moving.destroy();
    }
    const keys = (await stream.read(0, 100)).entries.map((entry) => entry.event.eventKey);
    expect(keys).not.toContain(mine.eventKey);
  });
});

describe("finding a place by time", () => {
  it("finds the first event recorded at or after a time, by halving", async () => {
    const tableName = await freshTable();
    let now = Date.parse("2026-11-20T10:00:00Z");
    const stream = new DynamoEventStream(
      { client: documents, tableName, now: () => new Date(now) },
      { retentionDays: 7 },
    );
    for (let minute = 0; minute < 20; minute++) {
      await stream.append([event(), event()]);
      now += 60_000;
    }
    // Two events a minute, from 10:00: the first at or after 10:07:30 is 10:08's first, place 17.
    expect(await stream.placeAt(new Date("2026-11-20T10:07:30Z"))).toBe(17);
    expect(await stream.placeAt(new Date("2026-11-20T10:08:00Z"))).toBe(17);
    expect(await stream.placeAt(new Date("2026-11-20T09:00:00Z"))).toBe(1);
    expect(await stream.placeAt(new Date("2026-11-20T11:00:00Z"))).toBe(41);
    // A clock that goes back never makes a place older than the one before it.
    now -= 3_600_000;
    await stream.append([event()]);
    const [last] = (await stream.read(40, 5)).entries;
    expect(Date.parse(last?.recordedAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse("2026-11-20T10:19:00Z"),
    );
  });
});
