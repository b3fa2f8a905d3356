import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStreamWriter } from "../packages/core/src/runtime/stream";
import { createDocumentClient, DynamoCallStore } from "../packages/core/src/store/dynamodb";
import { DynamoEventStream } from "../packages/core/src/store/dynamodb/event-stream";
import type { CallRecord } from "../packages/wire/src/model/call";
import { recordedReadabilityCall, resultBusEvent, scheduledBusEvent } from "./support/bus-events";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * The stage stream's writer as its function runs on AWS: fed SQS batches of bus events, it
 * keeps each event its call's record confirms, reading that record once a batch.
 */

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
/** Reads of a call's record (GetItem of a CALL# item) sent through `documents`. */
let gets = 0;
client.middlewareStack.add(
  (next, context) => (args) => {
    const key = (args.input as { Key?: { sk?: unknown } }).Key;
    if (context.commandName === "GetItemCommand" && String(key?.sk).startsWith("CALL#")) gets += 1;
    return next(args);
  },
  { step: "initialize", name: "countCallReads" },
);
let table: TestTable;
let calls: DynamoCallStore;
let stream: DynamoEventStream;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "stream-writer");
  const options = { client: documents, tableName: table.tableName };
  calls = new DynamoCallStore(options);
  stream = new DynamoEventStream(options, { retentionDays: 1 });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const recorded = (runId: string, callId: string) => recordedReadabilityCall(calls, runId, callId);
const scheduled = scheduledBusEvent;
const resulted = (call: CallRecord) => resultBusEvent(call);

/** An SQS batch as Lambda's poller hands the FIFO queue's messages to the function. */
const batch = (events: unknown[]) => ({
  Records: events.map((event) => ({ body: JSON.stringify(event) })),
});

describe("the stage stream's writer", () => {
  it("reads each call's record once a batch, however many of its events the batch holds", async () => {
    const first = await recorded("run-stream", "call-1");
    const second = await recorded("run-stream", "call-2");
    const write = createStreamWriter(() => ({ calls, stream }));
    const before = await stream.head();
    gets = 0;

    await write(batch([scheduled(first), resulted(first), scheduled(second), resulted(second)]));

    expect(gets).toBe(2);
    const { entries } = await stream.read(before, 10);
    expect(entries.map((entry) => entry.event.eventKey)).toEqual([
      "run-stream/call-1/scheduled",
      "run-stream/call-1/result",
      "run-stream/call-2/scheduled",
      "run-stream/call-2/result",
    ]);
  });

  it("still keeps out an event its call's record does not confirm, beside one it does", async () => {
    const call = await recorded("run-forged", "call-1");
    const write = createStreamWriter(() => ({ calls, stream }));
    const before = await stream.head();
    const forged = {
      ...resulted(call),
      detail: { ...resulted(call).detail, toolId: "web_search" },
    };

    await write(batch([scheduled(call), forged]));

    const { entries } = await stream.read(before, 10);
    expect(entries.map((entry) => entry.event.eventKey)).toEqual(["run-forged/call-1/scheduled"]);
  });
});
