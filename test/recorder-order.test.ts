import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scheduledDetail } from "../packages/core/src/app/calls/lifecycle";
import { createRecorder } from "../packages/core/src/runtime/recorder";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
} from "../packages/core/src/store/dynamodb";
import type { CallRecord } from "../packages/wire/src/model/call";
import {
  readabilityResult,
  recordedReadabilityCall,
  resultBusEvent,
  scheduledBusEvent,
} from "./support/bus-events";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let calls: DynamoCallStore;
let log: DynamoEventLog;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "recorder-order");
  calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
  log = new DynamoEventLog({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const result = readabilityResult;
const finishedCall = (runId: string) => recordedReadabilityCall(calls, runId, "call-1");
const scheduledEvent = scheduledBusEvent;
const resultEvent = (call: CallRecord) => resultBusEvent(call);

describe("the recorder's order within a call", () => {
  it("logs a result that arrives before its scheduling after the scheduling, each once", async () => {
    const call = await finishedCall("run-result-first");
    const record = createRecorder(() => ({ events: log, calls }));

    await record(resultEvent(call));
    // The scheduling arrives late (retried by the bus, or announced again by the sweeper).
    await record(scheduledEvent(call));
    await record(resultEvent(call));

    const { events } = await log.read("run-result-first");
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
    expect(events[0]?.detail).toEqual(scheduledDetail(call));
    expect(events[1]?.detail.output).toBe(result.output);
  });

  it("logs a scheduling and its result arriving at once, in that order", async () => {
    const call = await finishedCall("run-together");
    const record = createRecorder(() => ({ events: log, calls }));
    await Promise.all([record(resultEvent(call)), record(scheduledEvent(call))]);
    const { events } = await log.read("run-together");
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("leaves a finished call's scheduling to its result's event, which logs both in one write", async () => {
    const call = await finishedCall("run-fast");
    const record = createRecorder(() => ({ events: log, calls }));
    await record(scheduledEvent(call));
    expect((await log.read("run-fast")).events).toEqual([]);
    await record(resultEvent(call));
    const { events } = await log.read("run-fast");
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("still logs the scheduling of a call that has no result yet on its own", async () => {
    const call: CallRecord = {
      parentRunId: "run-slow",
      callId: "call-1",
      toolId: "readability_analyzer",
      toolset: "text_analysis",
      toolVersion: "1",
      input: { text: "Some text." },
      inputHash: "h",
      status: "pending",
      requestedBy: { id: "tester", role: "member" },
      scheduledAt: "2026-01-01T00:00:01.000Z",
    };
    await calls.create(call);
    const record = createRecorder(() => ({ events: log, calls }));
    await record(scheduledEvent(call));
    const { events } = await log.read("run-slow");
    expect(events.map((event) => event.detailType)).toEqual(["ToolCallScheduled"]);
  });
});
