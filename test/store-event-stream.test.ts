import { DeleteCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
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

/** The stream as another process writes it: its own client, so its own memory of the end. */
async function asAnotherProcess(
  tableName: string,
  use: (stream: DynamoEventStream) => Promise<void>,
): Promise<void> {
  const own = testDynamoDbClient();
  try {
    await use(
      new DynamoEventStream({ client: createDocumentClient(own), tableName }, { retentionDays: 7 }),
    );
  } finally {
    own.destroy();
  }
}

/** Counts the writes sent through `documents` (puts and updates), from now until stopped. */
function countWrites() {
  return countRequests(/^(Put|Update|Delete)Item/);
}

/** Counts the requests sent through `documents` whose command matches, until stopped. */
function countRequests(command: RegExp) {
  const name = `count${command.source}`;
  const counter = {
    count: 0,
    stop: () => client.middlewareStack.remove(name),
  };
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (command.test(String(context.commandName))) counter.count += 1;
      return next(args);
    },
    { step: "initialize", name },
  );
  return counter;
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
  it("lets a reader find the end with one query in the partition it found it in, and follow it into the next", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...STREAM_HEAD_KEY, seq: 99_990, at: new Date().toISOString() },
      }),
    );
    await stream.append([event()]);
    expect(await stream.head()).toBe(99_991);
    const requests = countRequests(/./);
    expect(await stream.head()).toBe(99_991);
    expect(requests.count).toBe(1);
    // Past the partition's end: the reader looks at the head again, once.
    await stream.append(Array.from({ length: 12 }, () => event()));
    requests.count = 0;
    expect(await stream.head()).toBe(100_003);
    expect(await stream.head()).toBe(100_003);
    expect(requests.count).toBe(4);
    requests.stop();
  });

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
  it("shows a chunk the moment it is written, and the next writer appends after it", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event(), event()]);
    // Another writer's chunk at place 3, written with nothing else to move.
    const theirs = event();
    await putChunk(tableName, 3, [theirs]);
    expect((await stream.read(2, 10)).entries.map((entry) => entry.event.eventKey)).toEqual([
      theirs.eventKey,
    ]);
    // Another process (its own client, so its own memory) goes on after it.
    await asAnotherProcess(tableName, async (other) => {
      const next = event();
      await other.append([next]);
      const entries = (await other.read(0, 10)).entries;
      expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4]);
      expect(entries[3]?.event.eventKey).toBe(next.eventKey);
    });
  });

  it("writes one item a commit, and a writer whose place was taken appends again after the winner's", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event()]);
    const writes = countWrites();
    await stream.append([event(), event()]);
    expect(writes.count).toBe(1);
    writes.stop();
    // Another writer appended meanwhile (its chunk at place 4).
    const theirs = event();
    await putChunk(tableName, 4, [theirs]);
    // This writer still thinks the stream ends at place 3: its chunk for place 4 is refused
    // (theirs is there), so it reads where the stream ends and appends after theirs.
    const refusals = countRefusals();
    const mine = event();
    await stream.append([mine]);
    expect(refusals.count).toBe(1);
    refusals.stop();
    const after = (await stream.read(0, 10)).entries;
    expect(after.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(after.map((entry) => entry.event.eventKey).slice(3)).toEqual([
      theirs.eventKey,
      mine.eventKey,
    ]);
  });

  it("gives up after a few tries when its place is always taken, having written nothing", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event()]);
    // Another writer that appends a chunk right before every chunk this one writes.
    const mine = event();
    const racing = testDynamoDbClient();
    racing.middlewareStack.add(
      (next) => async (args) => {
        const item = (args.input as { Item?: { sk?: unknown; firstSeq?: number } }).Item;
        if (String(item?.sk).startsWith("C#") && item?.firstSeq !== undefined) {
          await putChunk(tableName, item.firstSeq, [event()]);
        }
        return next(args);
      },
      { step: "initialize", name: "takePlace" },
    );
    try {
      const loser = new DynamoEventStream(
        { client: createDocumentClient(racing), tableName },
        { retentionDays: 7 },
      );
      await expect(loser.append([mine])).rejects.toThrow(/condition/i);
    } finally {
      racing.destroy();
    }
    const entries = await readAll(stream);
    expect(entries.map((entry) => entry.event.eventKey)).not.toContain(mine.eventKey);
    expect(entries.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("a stream an earlier release wrote, and one whose chunks expired", () => {
  it("goes on after the place an earlier release's head holds, even past chunks it left unseen", async () => {
    const tableName = await freshTable();
    // The head as earlier releases kept it (the last place, moved after every commit), and a
    // chunk a writer of theirs wrote without moving it.
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...STREAM_HEAD_KEY, seq: 41, at: new Date().toISOString() },
      }),
    );
    await putChunk(tableName, 40, [event(), event()]);
    const left = event();
    await putChunk(tableName, 42, [left]);
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    expect(await stream.head()).toBe(42);
    const mine = event();
    await stream.append([mine]);
    expect((await stream.read(41, 10)).entries.map((entry) => entry.event.eventKey)).toEqual([
      left.eventKey,
      mine.eventKey,
    ]);
  });

  it("never uses a place twice once every chunk has expired: it goes on from the next partition", async () => {
    const tableName = await freshTable();
    const stream = new DynamoEventStream({ client: documents, tableName }, { retentionDays: 7 });
    await stream.append([event(), event()]);
    // TTL removed every chunk (here by hand): only the head, naming partition 0, is left.
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": streamChunkKey(1).pk },
      }),
    );
    expect(Items).toHaveLength(1);
    await documents.send(new DeleteCommand({ TableName: tableName, Key: streamChunkKey(1) }));
    await asAnotherProcess(tableName, async (other) => {
      const next = event();
      await other.append([next]);
      expect(await other.head()).toBe(100_000);
      expect((await other.read(99_999, 5)).entries.map((entry) => entry.event.eventKey)).toEqual([
        next.eventKey,
      ]);
    });
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
