import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { createTableInput, indexInput, TABLE } from "./table";

/**
 * Creates the table if it is missing and turns TTL on; a table made by an earlier version gets
 * the indexes it lacks. For the local runtime and tests; on AWS the stack owns the table, built
 * from the same definition. `changeStream`: with the change stream the stack turns on (for
 * whoever plays Lambda's reader of it here).
 */
export async function ensureTable(
  client: DynamoDBClient,
  tableName: string,
  options: { changeStream?: boolean } = {},
): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName, options)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    await addMissingIndexes(client, tableName);
    return;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60, minDelay: 1 }, { TableName: tableName });
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
    }),
  );
}

/**
 * One index per UpdateTable, as DynamoDB allows. DynamoDB (Local too) fills a new index from
 * the items already there: a table whose gsi2 listed calls in flight and due deliveries gets
 * gsi4 with the same entries. An index the table has and TABLE no longer lists (gsi2, which
 * gsi4 replaced) is left as it is: nothing reads it, and locally its writes cost nothing.
 */
async function addMissingIndexes(client: DynamoDBClient, tableName: string): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Map(
    (Table?.GlobalSecondaryIndexes ?? []).map((index) => [index.IndexName, index.IndexStatus]),
  );
  for (const index of TABLE.indexes) {
    const status = present.get(index.name);
    // One an earlier start added but stopped waiting for is waited for now.
    if (status !== undefined) {
      if (status !== "ACTIVE") await untilIndexActive(client, tableName, index.name);
      continue;
    }
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [index.partitionKey, index.sortKey].map((name) => ({
          AttributeName: name,
          AttributeType: "S",
        })),
        GlobalSecondaryIndexUpdates: [{ Create: indexInput(index) }],
      }),
    );
    await untilIndexActive(client, tableName, index.name);
  }
}

async function untilIndexActive(client: DynamoDBClient, tableName: string, name: string) {
  for (let waited = 0; waited < 60_000; waited += 250) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((each) => each.IndexName === name);
    if (index?.IndexStatus === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Index ${name} of ${tableName} did not become active within 60 s.`);
}
