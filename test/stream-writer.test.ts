import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from "@aws-sdk/client-dynamodb-streams";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lambdaStreamRecord } from "../bench/cost/table-stream";
import { createStreamWriter } from "../packages/core/src/runtime/stream";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
} from "../packages/core/src/store/dynamodb";
import { DynamoEventStream } from "../packages/core/src/store/dynamodb/event-stream";
import { runLogEntryEvents } from "../packages/core/src/store/dynamodb/run-log-feed";
import type { CallRecord } from "../packages/wire/src/model/call";
import { recordedReadabilityCall, resultBusEvent, scheduledBusEvent } from "./support/bus-events";
import { resultEvent, scheduledEvent } from "./support/calls";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * The stage stream's writer as its function runs on AWS: fed the table's change stream of
 * run-log entries (read here from DynamoDB Local's own stream, handed over as Lambda's event
 * source does), it appends what the logs hold without reading a call; fed bus events (SQS
 * batches, the feed of the release before), it keeps each event its call's record confirms,
 * reading that record once a batch. (Under `npm start` the table's only writer puts the
 * stream's chunks itself: store-sole-stream.test.ts.)
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
  table = await createToolbusTestTable(client, "stream-writer", { changeStream: true });
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

  it("takes an SQS batch from its FIFO queue in order, passing over a message that is no event", async () => {
    const first = await recorded("run-fifo", "first");
    const second = await recorded("run-fifo", "second");
    const write = createStreamWriter(() => ({ calls, stream }));
    const before = await stream.head();

    await write({
      Records: [
        { body: JSON.stringify(scheduled(second)) },
        { body: "not an event" },
        { body: JSON.stringify(scheduled(first)) },
      ],
    });

    const { entries } = await stream.read(before, 10);
    expect(entries.map((entry) => entry.event.eventKey)).toEqual([
      "run-fifo/second/scheduled",
      "run-fifo/first/scheduled",
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

/** Every record of the table's change stream so far, from its start, as GetRecords gives them. */
async function changeRecords(): Promise<{ records: _Record[]; arn: string }> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: table.tableName }));
  const arn = Table?.LatestStreamArn;
  if (!arn) throw new Error("the table has no change stream");
  const streams = new DynamoDBStreamsClient({
    endpoint: await client.config
      .endpoint?.()
      .then((e) => `${e.protocol}//${e.hostname}:${e.port}`),
    region: await client.config.region(),
    credentials: await client.config.credentials(),
  });
  try {
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
    const records: _Record[] = [];
    for (const shard of StreamDescription?.Shards ?? []) {
      let { ShardIterator: iterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: arn,
          ShardId: shard.ShardId,
          ShardIteratorType: "TRIM_HORIZON",
        }),
      );
      while (iterator) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
        records.push(...(page.Records ?? []));
        if ((page.Records ?? []).length === 0) break;
        iterator = page.NextShardIterator;
      }
    }
    return { records, arn };
  } finally {
    streams.destroy();
  }
}

describe("the stage stream's writer fed by the table's change stream", () => {
  it("appends the events of new run-log entries in the order they were logged, reading no call", async () => {
    const log = new DynamoEventLog({ client: documents, tableName: table.tableName });
    const first = await recorded("run-fed", "call-1");
    const second = await recorded("run-fed", "call-2");
    const other = await recorded("run-fed-too", "call-1");
    // As whoever finishes a call logs it: its events together, one entry.
    for (const call of [first, other, second]) {
      await log.append(call, [scheduledEvent(call), resultEvent(call)]);
    }
    const { records, arn } = await changeRecords();
    // The writes of the calls themselves are in the change stream too: the writer passes them over.
    expect(records.some((record) => record.dynamodb?.Keys?.sk?.S?.startsWith("CALL#"))).toBe(true);
    const write = createStreamWriter(() => ({
      calls,
      stream,
      loggedEvents: runLogEntryEvents,
    }));
    const before = await stream.head();
    gets = 0;

    await write({ Records: records.map((record) => lambdaStreamRecord(record, arn)) });

    expect(gets).toBe(0);
    const { entries } = await stream.read(before, 20);
    const fed = entries
      .map((entry) => entry.event.eventKey)
      .filter((key) => key.startsWith("run-fed"));
    expect(fed).toEqual([
      "run-fed/call-1/scheduled",
      "run-fed/call-1/result",
      "run-fed-too/call-1/scheduled",
      "run-fed-too/call-1/result",
      "run-fed/call-2/scheduled",
      "run-fed/call-2/result",
    ]);
    // The same entries as the SDK reads them (bytes, not base64) give the same events.
    const asRead = { Records: records.map((record) => ({ ...lambdaStreamRecord(record, arn) })) };
    const fromBase64 = runLogEntryEvents(asRead);
    for (const [index, record] of asRead.Records.entries()) {
      const raw = records[index]?.dynamodb?.NewImage;
      if (raw) record.dynamodb.NewImage = raw as Record<string, unknown>;
    }
    expect(runLogEntryEvents(asRead)).toEqual(fromBase64);
    // Handed over again (Lambda retries a batch), nothing is appended twice.
    await write({ Records: records.map((record) => lambdaStreamRecord(record, arn)) });
    expect(await stream.head()).toBe(before + 6 + (entries.length - fed.length));
  });

  it("passes over what is not a new run-log entry: a removal, another item", async () => {
    const call = await recorded("run-passed", "call-1");
    const image = { pk: { S: "RUN#run-passed" }, sk: { S: "CALL#call-1" } };
    const record = (eventName: string, sk: string) => ({
      eventName,
      eventSource: "aws:dynamodb",
      dynamodb: { Keys: { ...image, sk: { S: sk } }, NewImage: { ...image, sk: { S: sk } } },
    });
    expect(
      runLogEntryEvents({
        Records: [record("MODIFY", "CALL#call-1"), record("REMOVE", "LOG#0000000000000001")],
      }),
    ).toEqual([]);
    // Not a batch of change records at all: left to the bus's path.
    expect(runLogEntryEvents({ Records: [{ body: JSON.stringify(scheduled(call)) }] })).toBe(
      undefined,
    );
  });
});
