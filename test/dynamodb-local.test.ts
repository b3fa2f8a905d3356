import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTimeToLiveCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  QueryCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient, startDynamoDbLocal } from "@toolbus/local/dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { createTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const tables: TestTable[] = [];

async function table(definition?: Parameters<typeof createTestTable>[1]): Promise<string> {
  const created = await createTestTable(client, definition);
  tables.push(created);
  return created.tableName;
}

afterAll(async () => {
  await Promise.all(tables.map((created) => created.drop()));
  client.destroy();
});

describe("DynamoDB Local shared by the test run", () => {
  describe("conditional writes", () => {
    it("accepts the first attribute_not_exists put and rejects the second, leaving the item unchanged", async () => {
      const TableName = await table();
      const put = (version: string) =>
        client.send(
          new PutItemCommand({
            TableName,
            Item: { pk: { S: "call#1" }, sk: { S: "record" }, version: { S: version } },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        );

      await put("first");
      await expect(put("second")).rejects.toBeInstanceOf(ConditionalCheckFailedException);

      const { Item } = await client.send(
        new GetItemCommand({ TableName, Key: { pk: { S: "call#1" }, sk: { S: "record" } } }),
      );
      expect(Item?.version).toEqual({ S: "first" });
    });
  });

  describe("transactions", () => {
    it("writes nothing when one condition fails and names the failing item in the cancellation reasons", async () => {
      const TableName = await table();
      await client.send(
        new PutItemCommand({
          TableName,
          Item: { pk: { S: "run#1" }, sk: { S: "taken" }, owner: { S: "earlier" } },
        }),
      );

      const transaction = client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName,
                Item: { pk: { S: "run#1" }, sk: { S: "fresh" } },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
            {
              Put: {
                TableName,
                Item: { pk: { S: "run#1" }, sk: { S: "taken" }, owner: { S: "later" } },
                ConditionExpression: "attribute_not_exists(pk)",
              },
            },
          ],
        }),
      );

      const error = await transaction.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TransactionCanceledException);
      const reasons = (error as TransactionCanceledException).CancellationReasons;
      expect(reasons?.map((reason) => reason.Code)).toEqual(["None", "ConditionalCheckFailed"]);

      const fresh = await client.send(
        new GetItemCommand({ TableName, Key: { pk: { S: "run#1" }, sk: { S: "fresh" } } }),
      );
      expect(fresh.Item).toBeUndefined();
      const taken = await client.send(
        new GetItemCommand({ TableName, Key: { pk: { S: "run#1" }, sk: { S: "taken" } } }),
      );
      expect(taken.Item?.owner).toEqual({ S: "earlier" });
    });

    it("writes every item when all conditions hold", async () => {
      const TableName = await table();
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: ["a", "b"].map((sk) => ({
            Put: {
              TableName,
              Item: { pk: { S: "run#2" }, sk: { S: sk } },
              ConditionExpression: "attribute_not_exists(pk)",
            },
          })),
        }),
      );

      const { Count } = await client.send(
        new QueryCommand({
          TableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": { S: "run#2" } },
        }),
      );
      expect(Count).toBe(2);
    });
  });

  describe("time to live", () => {
    it("reports TTL as enabled on expiresAt", async () => {
      const TableName = await table({ ttlAttribute: "expiresAt" });

      const { TimeToLiveDescription } = await client.send(
        new DescribeTimeToLiveCommand({ TableName }),
      );
      expect(TimeToLiveDescription).toEqual({
        TimeToLiveStatus: "ENABLED",
        AttributeName: "expiresAt",
      });
    });

    it("eventually deletes an item whose expiresAt is in the past and keeps one that has not expired", async () => {
      const TableName = await table({ ttlAttribute: "expiresAt" });
      const nowSeconds = Math.floor(Date.now() / 1000);
      const key = (sk: string) => ({ pk: { S: "cache" }, sk: { S: sk } });
      await client.send(
        new PutItemCommand({
          TableName,
          Item: { ...key("expired"), expiresAt: { N: String(nowSeconds - 60) } },
        }),
      );
      await client.send(
        new PutItemCommand({
          TableName,
          Item: { ...key("live"), expiresAt: { N: String(nowSeconds + 3600) } },
        }),
      );

      // DynamoDB Local runs a background sweeper, like the service, so deletion is not
      // immediate: poll a bounded number of times.
      let expired = true;
      for (let attempt = 0; attempt < 100 && expired; attempt++) {
        const { Item } = await client.send(new GetItemCommand({ TableName, Key: key("expired") }));
        expired = Item !== undefined;
        if (expired) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(expired).toBe(false);

      const live = await client.send(new GetItemCommand({ TableName, Key: key("live") }));
      expect(live.Item).toBeDefined();
    }, 60_000);
  });

  describe("global secondary indexes", () => {
    it("finds items by the index key", async () => {
      const TableName = await table({
        AttributeDefinitions: [{ AttributeName: "toolId", AttributeType: "S" }],
        GlobalSecondaryIndexes: [
          {
            IndexName: "byTool",
            KeySchema: [
              { AttributeName: "toolId", KeyType: "HASH" },
              { AttributeName: "sk", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
      });
      const calls = [
        { run: "run#1", call: "call#1", tool: "web_search" },
        { run: "run#2", call: "call#2", tool: "web_search" },
        { run: "run#2", call: "call#3", tool: "static_links" },
      ];
      for (const { run, call, tool } of calls) {
        await client.send(
          new PutItemCommand({
            TableName,
            Item: { pk: { S: run }, sk: { S: call }, toolId: { S: tool } },
          }),
        );
      }

      const { Items } = await client.send(
        new QueryCommand({
          TableName,
          IndexName: "byTool",
          KeyConditionExpression: "toolId = :tool",
          ExpressionAttributeValues: { ":tool": { S: "web_search" } },
        }),
      );
      expect(Items?.map((item) => item.sk?.S)).toEqual(["call#1", "call#2"]);
    });
  });
});

describe("DynamoDB Local on disk", () => {
  it("keeps tables and items across a stop and a start with the same dbPath", async () => {
    const dbPath = join(await mkdtemp(join(tmpdir(), "toolbus-ddb-")), "nested", "db");
    try {
      const first = await startDynamoDbLocal({ dbPath });
      const firstClient = localDynamoDbClient(first.endpoint);
      try {
        await firstClient.send(
          new CreateTableCommand({
            TableName: "persisted",
            BillingMode: "PAY_PER_REQUEST",
            KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
            AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
          }),
        );
        await waitUntilTableExists(
          { client: firstClient, maxWaitTime: 30, minDelay: 1 },
          { TableName: "persisted" },
        );
        await firstClient.send(
          new PutItemCommand({ TableName: "persisted", Item: { pk: { S: "kept" } } }),
        );
      } finally {
        firstClient.destroy();
        await first.stop();
      }

      const second = await startDynamoDbLocal({ dbPath });
      const secondClient = localDynamoDbClient(second.endpoint);
      try {
        const { TableNames } = await secondClient.send(new ListTablesCommand({}));
        expect(TableNames).toEqual(["persisted"]);
        const { Item } = await secondClient.send(
          new GetItemCommand({ TableName: "persisted", Key: { pk: { S: "kept" } } }),
        );
        expect(Item).toEqual({ pk: { S: "kept" } });
      } finally {
        secondClient.destroy();
        await second.stop();
      }
    } finally {
      await rm(join(dbPath, "..", ".."), { recursive: true, force: true });
    }
  }, 60_000);
});
