import { randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { itemBytes } from "../bench/cost/meter";
import { parseStageConfig } from "../packages/core/src/config";
import type { Deployment } from "../packages/core/src/deployment";
import { ValidationError } from "../packages/core/src/errors";
import {
  appendAsSoleWriter,
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
  storeOptions,
} from "../packages/core/src/store/dynamodb";
import type { CallRecord } from "../packages/wire/src/model/call";
import { progressEventKey, type RunEvent } from "../packages/wire/src/model/events";
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

/**
 * A call's events appended together share one run-log entry (log-requests.ts, logEntries):
 * keyed by the first one's place, the last one's in `last`. These tests cover writing them,
 * reading them alongside single-event entries (earlier releases' and lone events'), and the
 * sole writer's recovery read.
 */

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let log: DynamoEventLog;
let calls: DynamoCallStore;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-log-entries");
  log = new DynamoEventLog({ client: documents, tableName: table.tableName });
  calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const finishedCall = (runId: string, callId: string, overrides: Partial<CallRecord> = {}) =>
  recordFinished(calls, { parentRunId: runId, callId, ...overrides });

/** A log on a client of its own that notes how many actions each transaction it sends has. */
function logCountingActions() {
  const own = testDynamoDbClient();
  const transactions: number[] = [];
  own.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === "TransactWriteItemsCommand") {
        transactions.push((args.input as { TransactItems: unknown[] }).TransactItems.length);
      }
      return next(args);
    },
    { step: "initialize", name: "countActions" },
  );
  const log = new DynamoEventLog({ client: createDocumentClient(own), tableName: table.tableName });
  return { log, transactions, own };
}

const scheduled = scheduledEvent;
const progressed = (call: CallRecord, step: number): RunEvent => ({
  eventKey: progressEventKey(call.parentRunId, call.callId, step),
  detailType: "ToolCallProgress",
  occurredAt: "2026-01-01T00:00:01.500Z",
  detail: {
    parentRunId: call.parentRunId,
    callId: call.callId,
    progress: step,
    total: 10,
    reportedAt: "2026-01-01T00:00:01.500Z",
  },
});
const resulted = (call: CallRecord, output = "done") => resultEvent(call, { output });

const keys = (events: RunEvent[]) => events.map((event) => event.eventKey);
const place = (seq: number) => `LOG#${String(seq).padStart(16, "0")}`;

/** A run's LOG# items as stored. */
const stored = (runId: string) => storedRunLog(documents, table.tableName, runId);

/**
 * An entry as earlier releases wrote each event (and as a lone event still is): its attributes
 * on top.
 */
async function putSingle(runId: string, seq: number, event: RunEvent): Promise<void> {
  const { detail, ...rest } = event;
  await documents.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: `RUN#${runId}`, sk: place(seq), ...rest, detailJson: JSON.stringify(detail) },
    }),
  );
}

/** A multi-event entry as this release writes it (its JSON as text, or deflated), put directly. */
async function putMulti(
  runId: string,
  first: number,
  events: RunEvent[],
  form: "text" | "deflated" = "text",
): Promise<void> {
  const text = JSON.stringify(events);
  await documents.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        pk: `RUN#${runId}`,
        sk: place(first),
        last: first + events.length - 1,
        ...(form === "text" ? { eventsJson: text } : { eventsZ: deflateRawSync(text) }),
      },
    }),
  );
}

/** Every event of a run, page by page with the cursor. */
async function readAll(runId: string, limit: number, cursor?: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let at = cursor;
  for (let pages = 0; pages < 100; pages++) {
    const page = await log.read(runId, { cursor: at, limit });
    if (page.events.length === 0) return events;
    events.push(...page.events);
    at = page.cursor;
  }
  throw new Error("the log did not end");
}

describe("multi-event run-log entries", () => {
  it("reads single-event entries written by earlier releases, and appends a call's events after them as one entry", async () => {
    const run = "run-earlier-entries";
    const [old, call] = await Promise.all([
      finishedCall(run, "call-old"),
      finishedCall(run, "call-1"),
    ]);
    if (!old || !call) throw new Error("not recorded");
    // What a release before grouped entries left: one item per event.
    await putSingle(run, 1, scheduled(old));
    await putSingle(run, 2, resulted(old));
    // Its own client, so it knows nothing of the run and reads where it ends; no option set.
    const own = testDynamoDbClient();
    try {
      const fresh = new DynamoEventLog({
        client: createDocumentClient(own),
        tableName: table.tableName,
      });
      await fresh.append(call, [scheduled(call), resulted(call)]);
      const items = await stored(run);
      expect(items.map((item) => [item.sk, item.last, item.eventKey])).toEqual([
        [place(1), undefined, `${run}/call-old/scheduled`],
        [place(2), undefined, `${run}/call-old/result`],
        [place(3), 4, undefined],
      ]);
      const all = [scheduled(old), resulted(old), scheduled(call), resulted(call)];
      expect((await fresh.read(run)).events).toEqual(all);
      expect(await readAll(run, 1)).toEqual(all);
    } finally {
      own.destroy();
    }
  });

  it("fills each transaction up to its 100 actions, however many events the calls of one flush bring", async () => {
    const run = "run-actions";
    // Each call's events take more JSON than one entry may hold, so each event is an action of
    // its own: 24 calls of 4 events and an update each take 120 actions, which no single
    // transaction may hold (and, at about 70 KB a call, all but the first fit one flush).
    const { log: plain, transactions, own } = logCountingActions();
    try {
      const ids = Array.from({ length: 24 }, (_, n) => `call-${String(n).padStart(2, "0")}`);
      const all = await Promise.all(ids.map((id) => finishedCall(run, id)));
      // Appended at once: the first goes alone, the rest wait for it and go in one flush.
      await Promise.all(
        all.map((call) =>
          plain.append(call, [
            scheduled(call),
            progressed(call, 1),
            progressed(call, 2),
            resulted(call, "x".repeat(70_000)),
          ]),
        ),
      );
      expect(Math.max(...transactions)).toBeLessThanOrEqual(100);
      expect(transactions.reduce((sum, actions) => sum + actions, 0)).toBe(24 * 5);
      expect((await stored(run)).every((item) => item.last === undefined)).toBe(true);
      const events = await readAll(run, 1_000);
      expect(events).toHaveLength(24 * 4);
      expect(new Set(keys(events)).size).toBe(24 * 4);
    } finally {
      own.destroy();
    }
  });

  it("counts a call whose events share an entry as two actions, so a transaction takes 50 such calls", async () => {
    const run = "run-grouped-actions";
    const { log: plain, transactions, own } = logCountingActions();
    try {
      const ids = Array.from({ length: 60 }, (_, n) => `call-${String(n).padStart(2, "0")}`);
      const all = await Promise.all(ids.map((id) => finishedCall(run, id)));
      // An entry and an update each: 50 calls fill a transaction's 100 actions, where counting
      // by events took 33 (66 actions). Whether the first call goes alone depends on timing.
      await Promise.all(all.map((call) => plain.append(call, [scheduled(call), resulted(call)])));
      expect(transactions).toContain(100);
      expect(Math.max(...transactions)).toBe(100);
      expect(transactions.reduce((sum, actions) => sum + actions, 0)).toBe(120);
      expect(await readAll(run, 1_000)).toHaveLength(120);
    } finally {
      own.destroy();
    }
  });

  it("logs a call's start, progress and result appended together as one entry, each event keeping its own place on the call", async () => {
    const run = "run-grouped";
    const first = await finishedCall(run, "call-first");
    await log.append(first, [scheduled(first)]);
    const call = await finishedCall(run, "call-1");
    const events = [scheduled(call), progressed(call, 1), progressed(call, 2), resulted(call)];
    await log.append(call, events);

    const items = await stored(run);
    expect(items.map((item) => item.sk)).toEqual([place(1), place(2)]);
    expect(items[1]).toMatchObject({ last: 5 });
    expect(items[1]?.eventsJson ?? items[1]?.eventsZ).toBeDefined();
    expect(items[1]?.eventKey).toBeUndefined();
    expect((await log.read(run)).events).toEqual([scheduled(first), ...events]);
    // The marks name each event's own place, not the entry's key.
    expect(await calls.get(run, "call-1")).toMatchObject({
      scheduledLogSeq: 2,
      resultLogSeq: 5,
      progressLogStep: 2,
    });

    // The run's end is past the entry's last event: the next append goes at 6.
    const next = await finishedCall(run, "call-2");
    // A process that knows nothing of the run: it reads the end from the entry's range.
    const own = testDynamoDbClient();
    try {
      const fresh = new DynamoEventLog({
        client: createDocumentClient(own),
        tableName: table.tableName,
      });
      await fresh.append(next, [scheduled(next)]);
    } finally {
      own.destroy();
    }
    expect((await stored(run)).map((item) => item.sk)).toEqual([place(1), place(2), place(6)]);
    expect((await calls.get(run, "call-2"))?.scheduledLogSeq).toBe(6);
  });

  it("returns each event of a multi-event entry exactly once from a cursor before, at or after it", async () => {
    const run = "run-cursors";
    const [a, b, c] = await Promise.all(
      ["call-a", "call-b", "call-c"].map((id) => finishedCall(run, id)),
    );
    if (!a || !b || !c) throw new Error("not recorded");
    await log.append(a, [scheduled(a)]);
    // A follower that read the first entry before the multi-event one was written.
    const before = await log.read(run);
    await log.append(b, [scheduled(b), progressed(b, 1), resulted(b)]);
    await log.append(c, [scheduled(c)]);
    const all = [scheduled(a), scheduled(b), progressed(b, 1), resulted(b), scheduled(c)];

    expect(await readAll(run, 100)).toEqual(all);
    expect(await readAll(run, 100, before.cursor)).toEqual(all.slice(1));
    // One entry a page: the multi-event entry comes whole on a page of its own.
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 4; i++) {
      const page = await log.read(run, { cursor, limit: 1 });
      pages.push(keys(page.events));
      cursor = page.cursor;
    }
    expect(pages).toEqual([
      [scheduled(a).eventKey],
      keys([scheduled(b), progressed(b, 1), resulted(b)]),
      [scheduled(c).eventKey],
      [],
    ]);
    // From the cursor just before the multi-event entry, and from the one at it.
    const beforeEntry = await log.read(run, { limit: 1 });
    expect(keys(beforeEntry.events)).toEqual([scheduled(a).eventKey]);
    const through = await log.read(run, { cursor: beforeEntry.cursor, limit: 1 });
    expect(keys(through.events)).toEqual(keys([scheduled(b), progressed(b, 1), resulted(b)]));
    expect((await log.read(run, { cursor: through.cursor })).events).toEqual([scheduled(c)]);
  });

  it("counts a page's size in entries, never ending a page inside one", async () => {
    const run = "run-page-size";
    const [a, b, c] = await Promise.all(
      ["call-a", "call-b", "call-c"].map((id) => finishedCall(run, id)),
    );
    if (!a || !b || !c) throw new Error("not recorded");
    await log.append(a, [scheduled(a)]);
    await log.append(b, [scheduled(b), resulted(b)]);
    await log.append(c, [scheduled(c), resulted(c)]);
    const first = await log.read(run, { limit: 2 });
    expect(keys(first.events)).toEqual(keys([scheduled(a), scheduled(b), resulted(b)]));
    const second = await log.read(run, { cursor: first.cursor, limit: 2 });
    expect(keys(second.events)).toEqual(keys([scheduled(c), resulted(c)]));
    expect((await log.read(run, { cursor: second.cursor, limit: 2 })).events).toEqual([]);
  });

  it("reads a log mixing single-event entries of earlier releases and multi-event entries, in order", async () => {
    const run = "run-mixed";
    const [a, b, c] = await Promise.all(
      ["call-a", "call-b", "call-c"].map((id) => finishedCall(run, id)),
    );
    if (!a || !b || !c) throw new Error("not recorded");
    // Written by an earlier release: one item per event.
    await putSingle(run, 1, scheduled(a));
    await putSingle(run, 2, resulted(a));
    await log.append(b, [scheduled(b), resulted(b)]);
    await log.append(c, [scheduled(c)]);
    await log.append(c, [resulted(c)]);
    expect((await stored(run)).map((item) => item.sk)).toEqual([
      place(1),
      place(2),
      place(3),
      place(5),
      place(6),
    ]);
    const all = [scheduled(a), resulted(a), scheduled(b), resulted(b), scheduled(c), resulted(c)];
    expect(await readAll(run, 100)).toEqual(all);
    expect(await readAll(run, 1)).toEqual(all);
  });

  it("stops at a place no entry covers, not inside a multi-event entry's range", async () => {
    const run = "run-ranges";
    const event = (n: number): RunEvent => ({
      eventKey: `${run}/e${n}`,
      detailType: "ToolCallScheduled",
      occurredAt: "2026-01-01T00:00:01.000Z",
      detail: { n },
    });
    await putSingle(run, 1, event(1));
    await putMulti(run, 2, [event(2), event(3), event(4)]);
    // Place 5 still empty (its transaction in flight); 6 already there.
    await putSingle(run, 6, event(6));
    const first = await log.read(run);
    expect(keys(first.events)).toEqual([1, 2, 3, 4].map((n) => `${run}/e${n}`));
    expect(await log.read(run, { cursor: first.cursor })).toEqual({
      events: [],
      cursor: first.cursor,
    });
    await putSingle(run, 5, event(5));
    expect(keys((await log.read(run, { cursor: first.cursor })).events)).toEqual([
      `${run}/e5`,
      `${run}/e6`,
    ]);
    // A multi-event entry whose first place is past the reader's next place is a gap too.
    const other = "run-ranges-gap";
    await putSingle(other, 1, event(1));
    await putMulti(other, 3, [event(3), event(4)]);
    expect(keys((await log.read(other)).events)).toEqual([`${run}/e1`]);
  });

  it("keeps writers with a stale view of the run from placing events inside another's entry", async () => {
    const run = "run-stale";
    const all = await Promise.all(
      ["call-a", "call-b", "call-c", "call-d", "call-e"].map((id) => finishedCall(run, id)),
    );
    const [a, b, c, d, e] = all as [CallRecord, CallRecord, CallRecord, CallRecord, CallRecord];
    // Two processes, each with its own memory of where the run ends: their own DynamoDB
    // clients, as a writer's line and that memory are kept per client and table.
    const ownX = testDynamoDbClient();
    const ownY = testDynamoDbClient();
    const x = new DynamoEventLog({
      client: createDocumentClient(ownX),
      tableName: table.tableName,
    });
    const y = new DynamoEventLog({
      client: createDocumentClient(ownY),
      tableName: table.tableName,
    });
    try {
      await x.append(a, [scheduled(a)]);
      await y.append(b, [scheduled(b), resulted(b)]);
      // x still thinks the run ends at 1: a lone event there must not land inside b's 2..3.
      await x.append(c, [scheduled(c)]);
      await y.append(d, [scheduled(d)]);
      // x thinks it ends at 4 (its own last write); y wrote 5: its entry must not overlap.
      await x.append(e, [scheduled(e), resulted(e)]);
      expect((await stored(run)).map((item) => [item.sk, item.last])).toEqual([
        [place(1), undefined],
        [place(2), 3],
        [place(4), undefined],
        [place(5), undefined],
        [place(6), 7],
      ]);
      expect(keys(await readAll(run, 100))).toEqual(
        keys([
          scheduled(a),
          scheduled(b),
          resulted(b),
          scheduled(c),
          scheduled(d),
          scheduled(e),
          resulted(e),
        ]),
      );
    } finally {
      ownX.destroy();
      ownY.destroy();
    }
  });

  it("reads on past an entry that a release not reading multi-event entries put inside one's range", async () => {
    const run = "run-overlap";
    const event = (n: number): RunEvent => ({
      eventKey: `${run}/e${n}`,
      detailType: "ToolCallScheduled",
      occurredAt: "2026-01-01T00:00:01.000Z",
      detail: { n },
    });
    await putMulti(run, 1, [event(1), event(2), event(3)]);
    const follower = await log.read(run);
    expect(keys(follower.events)).toEqual([1, 2, 3].map((n) => `${run}/e${n}`));
    // A writer on a release older than the one before (rolled back that far) took LOG#1 for
    // the run's end and appended at 2, then 4.
    await putSingle(run, 2, event(4));
    await putSingle(run, 4, event(5));
    // The follower, past the multi-event entry, still gets what was put inside its range.
    const next = await log.read(run, { cursor: follower.cursor });
    expect(keys(next.events)).toEqual([`${run}/e4`, `${run}/e5`]);
    expect(await log.read(run, { cursor: next.cursor })).toEqual({
      events: [],
      cursor: next.cursor,
    });
    expect(await readAll(run, 1)).toEqual([1, 2, 3, 4, 5].map(event));
    expect(await readAll(run, 100)).toEqual([1, 2, 3, 4, 5].map(event));
  });

  it("rejects a cursor whose last place read is before its entry's key", async () => {
    const cursor = Buffer.from(`${place(3)}#${String(2).padStart(16, "0")}`).toString("base64url");
    await expect(log.read("run-grouped", { cursor })).rejects.toBeInstanceOf(ValidationError);
  });

  it("logs events past the size bound one entry each", async () => {
    const run = "run-over-bound";
    const call = await finishedCall(run, "call-1");
    const big = resulted(call, "x".repeat(70_000));
    await log.append(call, [scheduled(call), big]);
    const items = await stored(run);
    expect(items.map((item) => item.sk)).toEqual([place(1), place(2)]);
    expect(
      items.every((item) => item.last === undefined && typeof item.eventKey === "string"),
    ).toBe(true);
    expect((await log.read(run)).events).toEqual([scheduled(call), big]);
    expect(await calls.get(run, "call-1")).toMatchObject({ scheduledLogSeq: 1, resultLogSeq: 2 });
  });

  it("logs a synchronous call's two events and its marks in 8 write units, as AWS bills the transaction", async () => {
    const own = testDynamoDbClient();
    const transactions: { actions: Record<string, unknown>[]; indexUnits: number }[] = [];
    own.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "TransactWriteItemsCommand") return next(args);
        const input = args.input as {
          TransactItems: Record<string, unknown>[];
          ReturnConsumedCapacity?: string;
        };
        input.ReturnConsumedCapacity = "INDEXES";
        const answer = await next(args);
        const consumed =
          (
            answer.output as {
              ConsumedCapacity?: {
                GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
              }[];
            }
          ).ConsumedCapacity ?? [];
        const indexUnits = consumed
          .flatMap((capacity) => Object.values(capacity.GlobalSecondaryIndexes ?? {}))
          .reduce((sum, index) => sum + (index.CapacityUnits ?? 0), 0);
        transactions.push({ actions: input.TransactItems, indexUnits });
        return answer;
      },
      { step: "initialize", name: "meterTransactions" },
    );
    try {
      const run = "run-units";
      // A call item over 1 KB even compact: its result text hardly deflates.
      const call = await recordFinished(
        calls,
        { parentRunId: run, callId: "call-1" },
        succeededResult({ output: randomBytes(700).toString("base64") }),
      );
      const metered = new DynamoEventLog({
        client: createDocumentClient(own),
        tableName: table.tableName,
      });
      await metered.append(call, [scheduled(call), resulted(call)]);

      expect(transactions).toHaveLength(1);
      const [transaction] = transactions;
      if (!transaction) throw new Error("no transaction");
      // One entry and the call's update, where each event had an entry of its own.
      expect(transaction.actions).toHaveLength(2);
      const put = transaction.actions[0]?.Put as { Item: Record<string, unknown> };
      const entryBytes = itemBytes(marshall(put.Item, { removeUndefinedValues: true }));
      const { Item: callItem } = await client.send(
        new GetItemCommand({
          TableName: table.tableName,
          Key: marshall({ pk: `RUN#${run}`, sk: "CALL#call-1" }),
          ConsistentRead: true,
        }),
      );
      const callBytes = itemBytes(callItem as Record<string, AttributeValue>);
      expect(entryBytes).toBeLessThanOrEqual(1_024);
      expect(callBytes).toBeGreaterThan(1_024);
      expect(callBytes).toBeLessThanOrEqual(2_048);
      // AWS bills a transaction's items twice each, per started KB of each item.
      const billed = (bytes: number) => 2 * Math.ceil(bytes / 1_024);
      const units = billed(entryBytes) + billed(callBytes) + transaction.indexUnits;
      expect(units).toBe(8);
    } finally {
      own.destroy();
    }
  });
});

describe("the sole writer's recovery read with multi-event entries", () => {
  it("finds no holes inside a multi-event entry and knows its events, so it logs them not again", async () => {
    const run = "run-sole-ranges";
    const [a, b, c] = await Promise.all(
      ["call-a", "call-b", "call-c"].map((id) => finishedCall(run, id)),
    );
    if (!a || !b || !c) throw new Error("not recorded");
    // What a process before a crash left: a's events together at 1..2, c's at 4, b's place
    // (3) empty: its batch was cut.
    await putMulti(run, 1, [scheduled(a), resulted(a)], "deflated");
    await putSingle(run, 4, scheduled(c));

    const own = testDynamoDbClient();
    try {
      const writer = new DynamoEventLog(
        storeOptions({
          dynamodb: own,
          tableName: table.tableName,
          appendLog: appendAsSoleWriter,
          config: parseStageConfig({}),
        } as Deployment),
      );
      // The bus delivers again: a's events (logged already) and b's (lost).
      await writer.append(a, [scheduled(a), resulted(a)]);
      await writer.append(b, [scheduled(b), resulted(b)]);
    } finally {
      own.destroy();
    }
    const items = await stored(run);
    // Place 2 is inside a's entry: no skip entry there; 3 is filled with one; b's go at 5..6.
    expect(items.map((item) => [item.sk, item.skip ?? false, item.last])).toEqual([
      [place(1), false, 2],
      [place(3), true, undefined],
      [place(4), false, undefined],
      [place(5), false, 6],
    ]);
    expect(await readAll(run, 100)).toEqual([
      scheduled(a),
      resulted(a),
      scheduled(c),
      scheduled(b),
      resulted(b),
    ]);
  });
});
