import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deployment } from "../packages/core/src/deployment";
import { ValidationError } from "../packages/core/src/errors";
import type { CallRecord } from "../packages/core/src/model/call";
import type { RunEvent } from "../packages/core/src/model/events";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
  encodeCursor,
  storeOptions,
} from "../packages/core/src/store/dynamodb";
import { createTableInput } from "../packages/core/src/store/table";
import { createTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let log: DynamoEventLog;

beforeAll(async () => {
  const { TableName: _unused, ...definition } = createTableInput("unused");
  table = await createTestTable(client, { ...definition, namePrefix: "store-events" });
  log = new DynamoEventLog({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const event = (runId: string, callId: string, second: number): RunEvent => ({
  eventKey: `${runId}/${callId}/scheduled`,
  detailType: "ToolCallScheduled",
  occurredAt: `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`,
  detail: { parentRunId: runId, callId, toolId: "web_search", input: { query: callId } },
});

const keys = (events: RunEvent[]) => events.map((item) => item.eventKey);

describe("DynamoEventLog", () => {
  it("appends an event once per eventKey and reads it back unchanged", async () => {
    const first = event("run-once", "call-1", 1);
    await log.append("run-once", first);
    await log.append("run-once", first);

    const page = await log.read("run-once");
    expect(page.events).toEqual([first]);
  });

  it("keeps a detail with numbers DynamoDB cannot hold, and reads events stored as maps before", async () => {
    const run = "run-wide";
    const wide = event(run, "call-wide", 1);
    wide.detail = {
      ...wide.detail,
      input: JSON.parse('{"n": 123456789012345678901234567890, "x": 1e300}'),
    };
    await log.append(run, wide);
    // As earlier versions wrote an event: the detail a map.
    const legacy = event(run, "call-legacy", 2);
    await documents.send(
      new PutCommand({
        TableName: table.tableName,
        Item: { pk: `RUN#${run}`, sk: `EVENT#${legacy.occurredAt}#${legacy.eventKey}`, ...legacy },
      }),
    );
    expect((await log.read(run)).events).toEqual([wide, legacy]);
  });

  it("writes appends that arrive together, duplicates among them, as one entry each", async () => {
    const run = "run-together";
    const events = Array.from({ length: 60 }, (_, i) => event(run, `call-${i % 40}`, i % 40));
    await Promise.all(events.map((item) => log.append(run, item)));
    const page = await log.read(run, { limit: 1000 });
    expect(page.events).toHaveLength(40);
    expect(new Set(keys(page.events)).size).toBe(40);
  });

  it("reads a run's events in time order, then by event key, whatever the append order", async () => {
    const run = "run-ordered";
    const late = event(run, "call-c", 30);
    const tieB = event(run, "call-b", 10);
    const tieA = event(run, "call-a", 10);
    const early = { ...event(run, "call-z", 5), occurredAt: "2026-01-01T00:00:05Z" };
    for (const item of [late, tieB, tieA, early]) await log.append(run, item);
    await log.append("run-other", event("run-other", "call-x", 1));

    const page = await log.read(run);
    expect(keys(page.events)).toEqual(keys([early, tieA, tieB, late]));
    // The stored event keeps the time it was given; only the key uses the normalized form.
    expect(page.events[0]?.occurredAt).toBe("2026-01-01T00:00:05Z");
  });

  it("pages through a run with the cursor, without gaps or repeats", async () => {
    const run = "run-paged";
    const all = Array.from({ length: 7 }, (_, index) => event(run, `call-${index}`, index));
    for (const item of all) await log.append(run, item);

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
    await log.append(run, event(run, "call-1", 1));
    const first = await log.read(run);
    expect(first.cursor).toBeDefined();

    const idle = await log.read(run, { cursor: first.cursor });
    expect(idle).toEqual({ events: [], cursor: first.cursor });

    const later = event(run, "call-2", 2);
    await log.append(run, later);
    const next = await log.read(run, { cursor: idle.cursor });
    expect(next.events).toEqual([later]);
    expect(next.cursor).not.toBe(first.cursor);
  });

  it("has no cursor for a run with no events yet", async () => {
    expect(await log.read("run-empty")).toEqual({ events: [], cursor: undefined });
  });

  it("defaults to 100 events a page and caps a page at 1000", async () => {
    const run = "run-big";
    const all = Array.from({ length: 1_005 }, (_, index) => ({
      ...event(run, `call-${String(index).padStart(4, "0")}`, 0),
    }));
    for (let start = 0; start < all.length; start += 100) {
      await Promise.all(all.slice(start, start + 100).map((item) => log.append(run, item)));
    }
    expect((await log.read(run)).events).toHaveLength(100);
    const capped = await log.read(run, { limit: 5_000 });
    expect(capped.events).toHaveLength(1_000);
    expect((await log.read(run, { cursor: capped.cursor, limit: 1_000 })).events).toHaveLength(5);
  });

  it.each([
    ["not base64url", "not a cursor!"],
    ["not an event position", encodeCursor("CALL#call-1")],
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
    const bad = { ...event("run-bad", "call-1", 1), occurredAt: "yesterday" };
    await expect(log.append("run-bad", bad)).rejects.toBeInstanceOf(ValidationError);
  });
});

describe("puts of one deployment's stores", () => {
  it("leave in one BatchWriteItem when they linger: a call's mark and its log entries together", async () => {
    // Its own DynamoDB client, so its line (and its linger) is this test's alone.
    const own = testDynamoDbClient();
    const sent: string[] = [];
    own.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(String(context.commandName));
        return next(args);
      },
      { step: "initialize", name: "countCommands" },
    );
    try {
      const options = storeOptions({
        dynamodb: own,
        tableName: table.tableName,
        writeLingerMs: 20,
      } as Deployment);
      const recorder = new DynamoEventLog(options);
      const calls = new DynamoCallStore(
        storeOptions({
          dynamodb: own,
          tableName: table.tableName,
          writeLingerMs: 20,
        } as Deployment),
      );
      const finished: CallRecord = {
        parentRunId: "run-linger",
        callId: "call-1",
        toolId: "web_search",
        toolset: "research",
        toolVersion: "1",
        input: { query: "call-1" },
        inputHash: "h",
        status: "succeeded",
        requestedBy: { id: "tester", role: "member" },
        scheduledAt: "2026-01-01T00:00:01.000Z",
      };
      // As in a call's tail: the recorder gets both events a moment apart from the mark.
      const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await Promise.all([
        recorder.append("run-linger", event("run-linger", "call-1", 1)),
        later(3).then(() => calls.markPublished(finished, "2026-01-01T00:00:02.000Z")),
        later(6).then(() =>
          recorder.append("run-linger", {
            ...event("run-linger", "call-1", 2),
            eventKey: "run-linger/call-1/result",
          }),
        ),
      ]);
      expect(sent).toEqual(["BatchWriteItemCommand"]);
      const page = await new DynamoEventLog(options).read("run-linger");
      expect(keys(page.events)).toEqual([
        "run-linger/call-1/scheduled",
        "run-linger/call-1/result",
      ]);
    } finally {
      own.destroy();
    }
  });
});

describe("a run's log with a settle window", () => {
  it("shows events recorded out of order to a reader in order, none passed over", async () => {
    const settled = new DynamoEventLog({
      client: documents,
      tableName: table.tableName,
      eventSettleMs: 400,
    });
    const runId = `run-settle-${Date.now()}`;
    const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    const later = { ...event(runId, "b", 1), eventKey: `${runId}/b`, occurredAt: at(50) };
    await settled.append(runId, later);
    // A reader right now sees nothing yet, so its cursor cannot pass the earlier event.
    const first = await settled.read(runId);
    expect(first.events).toEqual([]);
    const earlier = { ...event(runId, "a", 1), eventKey: `${runId}/a`, occurredAt: at(100) };
    await settled.append(runId, earlier);

    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = await settled.read(runId, first.cursor ? { cursor: first.cursor } : {});
    expect(keys(next.events)).toEqual([`${runId}/a`, `${runId}/b`]);
    // Without the window the first read would have shown b and moved past a's place.
    const unsettled = await log.read(runId);
    expect(keys(unsettled.events)).toEqual([`${runId}/a`, `${runId}/b`]);
  });
});
