import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { ensureTable } from "@toolbus/core";
import { localDynamoDbClient, startDynamoDbLocal } from "../../packages/local/src/dynamodb";
import { percentile, runConcurrently } from "../stats";
import { CONCURRENT } from "./clients";

const TABLE_NAME = "fastpath-floor";
/** DynamoDB Local is a JVM: its first few thousand requests run in the interpreter. */
const WARM_UP = 2_000;
const GETS = 1_000;
const PUTS = 3_000;

export interface StorageFloor {
  /** One GetItem, one client, after warm-up. */
  getP50: number;
  getP99: number;
  /** PutItem calls per second from CONCURRENT clients. */
  putThroughput: number;
}

/**
 * The storage under Toolbus on its own: DynamoDB Local in memory, started in this process
 * exactly as `npm start -- --memory` starts it, through the same AWS SDK client.
 */
export async function measureStorageFloor(): Promise<StorageFloor> {
  const db = await startDynamoDbLocal();
  const client = localDynamoDbClient(db.endpoint);
  try {
    await ensureTable(client, TABLE_NAME);
    const key = { pk: { S: "bench#floor" }, sk: { S: "item" } };
    await client.send(
      new PutItemCommand({ TableName: TABLE_NAME, Item: { ...key, value: { S: "x" } } }),
    );
    const get = () =>
      client.send(new GetItemCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }));
    const put = (i: number) =>
      client.send(
        new PutItemCommand({
          TableName: TABLE_NAME,
          Item: { pk: { S: `bench#${randomUUID()}` }, sk: { S: `item#${i}` }, value: { S: "x" } },
        }),
      );

    await runConcurrently(WARM_UP, 4, async () => void (await get()));
    await runConcurrently(WARM_UP / 4, 4, async (i) => void (await put(i)));

    const latencies: number[] = [];
    await runConcurrently(GETS, 1, async () => {
      const t0 = performance.now();
      await get();
      latencies.push(performance.now() - t0);
    });
    const sorted = latencies.sort((a, b) => a - b);

    const started = performance.now();
    await runConcurrently(PUTS, CONCURRENT, async (i) => void (await put(i)));
    const putThroughput = (PUTS / (performance.now() - started)) * 1000;
    return { getP50: percentile(sorted, 50), getP99: percentile(sorted, 99), putThroughput };
  } finally {
    client.destroy();
    await db.stop();
  }
}
