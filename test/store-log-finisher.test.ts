import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
} from "../packages/core/src/store/dynamodb";
import type { CallRecord } from "../packages/wire/src/model/call";
import { finishedCall, resultEvent, scheduledEvent } from "./support/calls";
import {
  createToolbusTestTable,
  storedRunLog,
  type TestTable,
  testDynamoDbClient,
} from "./support/dynamodb";

/**
 * A call the API ran for a waiting caller is logged by the API alone, without a transaction:
 * its entry, then its marks (store/dynamodb/log-finisher.ts). Between the two writes the log
 * holds events its call does not show logged; these tests cut the writer there, lose its
 * answers, and race it, and the log must still hold each event once.
 */

const client = testDynamoDbClient();
/** Another process's client: its own memory of where runs end, none of this one's faults. */
const otherClient = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let log: DynamoEventLog;
let calls: DynamoCallStore;
/** Requests sent through `documents`, by command, since the last reset. */
let sent: Record<string, number> = {};
/**
 * Commands whose next request fails (after `pass` more go through), and how: before it reaches
 * DynamoDB, or after (its answer lost).
 */
const faults: { command: string; when: "before" | "after"; onCall?: boolean; pass?: number }[] = [];

client.middlewareStack.add(
  (next, context) => async (args) => {
    const command = String(context.commandName);
    sent[command] = (sent[command] ?? 0) + 1;
    // Marshalled by now: { S: "CALL#…" }.
    const sk = (args.input as { Key?: { sk?: { S?: string } } }).Key?.sk?.S ?? "";
    const index = faults.findIndex(
      (fault) => fault.command === command && (!fault.onCall || sk.startsWith("CALL#")),
    );
    const matching = faults[index];
    const fault = matching && !matching.pass ? faults.splice(index, 1)[0] : undefined;
    if (matching?.pass) matching.pass -= 1;
    if (fault?.when === "before") {
      throw Object.assign(new Error("the process stopped"), { name: "ProcessStopped" });
    }
    const answer = await next(args);
    // The write is done, its answer lost: the SDK's retry sends it again.
    if (fault?.when === "after") {
      throw Object.assign(new Error("socket hang up"), { name: "TimeoutError" });
    }
    return answer;
  },
  { step: "deserialize", name: "faults" },
);

beforeAll(async () => {
  table = await createToolbusTestTable(client, "log-finisher");
  const options = { client: documents, tableName: table.tableName };
  log = new DynamoEventLog(options);
  calls = new DynamoCallStore(options);
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
  otherClient.destroy();
});

/** The run logs as another process (a recorder) writes them. */
const elsewhere = () =>
  new DynamoEventLog({ client: createDocumentClient(otherClient), tableName: table.tableName });

/** A call the API ran itself (`dispatch: "direct"`), finished, nothing of it logged yet. */
const directCall = (runId: string, callId = "call-1") =>
  finishedCall(calls, { parentRunId: runId, callId, dispatch: "direct" });

const both = (call: CallRecord) => [scheduledEvent(call), resultEvent(call)];

/** Every event of the run as readers read it, in order. */
async function logged(runId: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await log.read(runId, { cursor, limit: 100 });
    keys.push(...page.events.map((event) => event.eventKey));
    if (page.events.length === 0 || page.cursor === cursor) return keys;
    cursor = page.cursor;
  }
}

const entries = (runId: string) => storedRunLog(documents, table.tableName, runId);

async function expectMarkedAndOff(call: CallRecord) {
  const stored = await calls.get(call.parentRunId, call.callId);
  expect(stored?.scheduledLogSeq).toBeDefined();
  expect(stored?.resultLogSeq).toBeDefined();
  expect(stored?.resultPublishedAt).toBeDefined();
  // Off the index of work in flight: the sweeper has nothing to announce again.
  const later = "2999-01-01T00:00:00.000Z";
  expect((await calls.listStuck(later)).map((c) => c.callId)).not.toContain(call.callId);
  expect((await calls.listUnannounced(later)).map((c) => c.callId)).not.toContain(call.callId);
}

describe("a finisher logging alone", () => {
  it("writes the entry and then the marks, with no transaction", async () => {
    const call = await directCall("run-alone");
    sent = {};
    await log.append(call, both(call), { finisher: "alone" });
    expect(sent.TransactWriteItemsCommand ?? 0).toBe(0);
    expect(sent.PutItemCommand).toBe(1);
    expect(sent.UpdateItemCommand).toBe(1);
    expect(await logged("run-alone")).toEqual(both(call).map((event) => event.eventKey));
    await expectMarkedAndOff(call);
  });

  it("keeps to a transaction where others were told of the call, or it did not run here", async () => {
    const call = await directCall("run-shared");
    sent = {};
    await log.append(call, both(call), { finisher: "after-others" });
    expect(sent.TransactWriteItemsCommand).toBe(1);
    const bus = await finishedCall(calls, { parentRunId: "run-bus", callId: "call-1" });
    sent = {};
    await log.append(bus, both(bus), { finisher: "alone" });
    expect(sent.TransactWriteItemsCommand).toBe(1);
  });

  it("takes its own entry and marks for written when their answers were lost", async () => {
    const call = await directCall("run-lost");
    faults.push({ command: "PutItemCommand", when: "after" });
    faults.push({ command: "UpdateItemCommand", when: "after", onCall: true });
    await log.append(call, both(call), { finisher: "alone" });
    expect(faults).toEqual([]);
    expect(await logged("run-lost")).toEqual(both(call).map((event) => event.eventKey));
    expect((await entries("run-lost")).filter((entry) => entry.skip === true)).toEqual([]);
    await expectMarkedAndOff(call);
  });

  it("goes after another writer that took its place", async () => {
    const call = await directCall("run-taken");
    const other = await directCall("run-taken", "call-0");
    // This process learns where the run ends, then another process appends there.
    await log.append(other, [scheduledEvent(other)]);
    const stored = (await calls.get("run-taken", "call-0")) as CallRecord;
    await elsewhere().append(stored, [resultEvent(stored)]);
    await log.append(call, both(call), { finisher: "alone" });
    expect(await logged("run-taken")).toEqual([
      "run-taken/call-0/scheduled",
      "run-taken/call-0/result",
      "run-taken/call-1/scheduled",
      "run-taken/call-1/result",
    ]);
  });

  it("leaves the recorder nothing to log twice when it stopped between its entry and its marks", async () => {
    const call = await directCall("run-cut");
    faults.push({ command: "UpdateItemCommand", when: "before", onCall: true });
    await expect(log.append(call, both(call), { finisher: "alone" })).rejects.toThrow();
    // The entry is in, the call not marked: still on the index, so it is announced again and
    // the recorder gets its events, as from the bus (no finisher).
    expect(await logged("run-cut")).toEqual(both(call).map((event) => event.eventKey));
    const unmarked = (await calls.get("run-cut", "call-1")) as CallRecord;
    expect(unmarked.resultLogSeq).toBeUndefined();
    const recorder = elsewhere();
    await recorder.append(unmarked, both(unmarked));
    expect(await logged("run-cut")).toEqual(both(call).map((event) => event.eventKey));
    await expectMarkedAndOff(call);
  });

  it("turns its entry into one readers pass over when another writer marked the call first", async () => {
    const call = await directCall("run-raced");
    // Logged meanwhile by the recorder (from a repeated announcement), which marked the call.
    await elsewhere().append(call, both(call));
    // The finisher, which had read the call before, logs alone with what it knew.
    await log.append(call, both(call), { finisher: "alone" });
    expect(await logged("run-raced")).toEqual(both(call).map((event) => event.eventKey));
    const items = await entries("run-raced");
    expect(items).toHaveLength(2);
    expect(items[1]?.skip).toBe(true);
    // The run goes on after the skipped place.
    const next = await directCall("run-raced", "call-2");
    await log.append(next, both(next), { finisher: "alone" });
    expect((await logged("run-raced")).slice(2)).toEqual(both(next).map((e) => e.eventKey));
  });

  it("does not log alone a call that shows something logged: others were told of it", async () => {
    const call = await directCall("run-marked");
    // The start reached the recorder after all (a publish reported failed had landed).
    await log.append(call, [scheduledEvent(call)]);
    const marked = (await calls.get("run-marked", "call-1")) as CallRecord;
    sent = {};
    await log.append(marked, both(marked), { finisher: "alone" });
    expect(sent.TransactWriteItemsCommand).toBe(1);
    expect(await logged("run-marked")).toEqual(both(call).map((event) => event.eventKey));
  });

  it("passes over its entry when a start the recorder logged beat its marks and the rewrite failed", async () => {
    const call = await directCall("run-stale");
    // The recorder logs the start; the finisher, which read the call before, logs alone.
    await elsewhere().append(call, [scheduledEvent(call)]);
    // Its marks are refused, and so is turning its entry into a skip entry.
    faults.push({ command: "PutItemCommand", when: "before", pass: 1 });
    await expect(log.append(call, both(call), { finisher: "alone" })).rejects.toThrow();
    expect(faults).toEqual([]);
    expect((await entries("run-stale")).map((entry) => entry.skip === true)).toEqual([
      false,
      false,
    ]);
    // Announced again, the result reaches the recorder: the finisher's entry repeats the start,
    // so it is passed over, and the result is logged once.
    const stored = (await calls.get("run-stale", "call-1")) as CallRecord;
    await elsewhere().append(stored, both(stored));
    expect(await logged("run-stale")).toEqual(both(call).map((event) => event.eventKey));
    await expectMarkedAndOff(call);
  });
});
