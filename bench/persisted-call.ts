import {
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  ResourceInUseException,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";

/**
 * The least a server that keeps its calls must write per call, as the floor route and the
 * `jvm` group both measure it: the call, once, conditionally (PutItem), then its result
 * (UpdateItem), on a keys-only table, so nothing of Toolbus's own layout is counted.
 */

/** Creates the keys-only table (pk, sk) if it is not there yet. */
export async function ensureKeysOnlyTable(client: DynamoDBClient, TableName: string) {
  try {
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: "PAY_PER_REQUEST",
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "S" },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
}

/** Writes a call (input as JSON text) under a run, then its result, as two requests. */
export async function persistCall(
  client: DynamoDBClient,
  TableName: string,
  call: { runId: string; callId: string; input: string; result: () => Promise<string> | string },
): Promise<void> {
  const Key = { pk: { S: `RUN#${call.runId}` }, sk: { S: `CALL#${call.callId}` } };
  await client.send(
    new PutItemCommand({
      TableName,
      Item: { ...Key, status: { S: "running" }, input: { S: call.input } },
      ConditionExpression: "attribute_not_exists(pk)",
    }),
  );
  const result = await call.result();
  await client.send(
    new UpdateItemCommand({
      TableName,
      Key,
      UpdateExpression: "SET #status = :done, #result = :result",
      ExpressionAttributeNames: { "#status": "status", "#result": "result" },
      ExpressionAttributeValues: { ":done": { S: "succeeded" }, ":result": { S: result } },
    }),
  );
}
