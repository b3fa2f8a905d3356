import { randomBytes } from "node:crypto";
import {
  type AttributeDefinition,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { inject } from "vitest";
import { createTableInput } from "../../packages/core/src/store/table";
import "../setup/context";

export interface TestTableDefinition extends Partial<Omit<CreateTableCommandInput, "TableName">> {
  /** Turn on TTL for this attribute once the table exists. */
  ttlAttribute?: string;
  /** Readable start of the generated table name, to spot a table when debugging. */
  namePrefix?: string;
}

export interface TestTable {
  tableName: string;
  /** Deletes the table; safe to call twice. */
  drop(): Promise<void>;
}

const DEFAULT_KEY_SCHEMA: CreateTableCommandInput["KeySchema"] = [
  { AttributeName: "pk", KeyType: "HASH" },
  { AttributeName: "sk", KeyType: "RANGE" },
];
const DEFAULT_KEY_ATTRIBUTES: AttributeDefinition[] = [
  { AttributeName: "pk", AttributeType: "S" },
  { AttributeName: "sk", AttributeType: "S" },
];

/** A table laid out as the stacks make Toolbus's own (keys, indexes, TTL), under a random name. */
export function createToolbusTestTable(
  client: DynamoDBClient,
  namePrefix: string,
  options: { changeStream?: boolean } = {},
): Promise<TestTable> {
  const { TableName: _unused, ...definition } = createTableInput("unused", options);
  return createTestTable(client, { ...definition, namePrefix });
}

/** A client for the DynamoDB Local started by test/setup/global.ts. */
export function testDynamoDbClient(): DynamoDBClient {
  return localDynamoDbClient(inject("dynamodbEndpoint"));
}

/**
 * Creates a table with a random name, so test files running in parallel against the one
 * shared DynamoDB Local never see each other's data. Defaults to a pk/sk string key,
 * on-demand billing. Attribute definitions given alongside the default key (for example for
 * a GSI) are added to the key's own.
 */
export async function createTestTable(
  client: DynamoDBClient,
  definition: TestTableDefinition = {},
): Promise<TestTable> {
  const { ttlAttribute, namePrefix = "test", ...input } = definition;
  const tableName = `${namePrefix}-${randomBytes(6).toString("hex")}`;
  const keyAttributes = input.KeySchema ? [] : DEFAULT_KEY_ATTRIBUTES;

  await client.send(
    new CreateTableCommand({
      BillingMode: "PAY_PER_REQUEST",
      ...input,
      TableName: tableName,
      KeySchema: input.KeySchema ?? DEFAULT_KEY_SCHEMA,
      AttributeDefinitions: uniqueByName([...keyAttributes, ...(input.AttributeDefinitions ?? [])]),
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: tableName });

  if (ttlAttribute !== undefined) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  }

  let dropped: Promise<void> | undefined;
  return {
    tableName,
    drop() {
      dropped ??= client
        .send(new DeleteTableCommand({ TableName: tableName }))
        .then(() => undefined)
        .catch((error: unknown) => {
          if (!(error instanceof ResourceNotFoundException)) throw error;
        });
      return dropped;
    },
  };
}

function uniqueByName(definitions: AttributeDefinition[]): AttributeDefinition[] {
  const byName = new Map(definitions.map((definition) => [definition.AttributeName, definition]));
  return [...byName.values()];
}

/** A run's log items (`LOG#…`) as stored, in place order, read strongly consistent. */
export async function storedRunLog(
  documents: DynamoDBDocumentClient,
  tableName: string,
  runId: string,
): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :log)",
      ExpressionAttributeValues: { ":pk": `RUN#${runId}`, ":log": "LOG#" },
      ConsistentRead: true,
    }),
  );
  return Items;
}
