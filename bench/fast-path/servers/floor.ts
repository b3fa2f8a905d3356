/**
 * The floor of a persisted call: a bare Hono route that validates the input, writes the call
 * (one conditional PutItem), runs readability_analyzer in this process and stores its result
 * (one UpdateItem), on the DynamoDB Local that the Toolbus under test uses, through the same
 * AWS SDK client. No auth, no bus, no log: what any server keeping its calls must at least do.
 * Takes the endpoint in FLOOR_DYNAMODB_ENDPOINT; prints its port on stdout once it listens.
 */
import type { AddressInfo } from "node:net";
import {
  CreateTableCommand,
  PutItemCommand,
  ResourceInUseException,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { serve } from "@hono/node-server";
import { testToolContext } from "@toolbus/core/testing";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { readabilityAnalyzer, readabilityInput } from "@toolbus/tools/readability";
import { Hono } from "hono";

const endpoint = process.env.FLOOR_DYNAMODB_ENDPOINT;
if (!endpoint) throw new Error("FLOOR_DYNAMODB_ENDPOINT is not set");
/** A table of its own, keys only, so nothing of Toolbus's layout (indexes) is counted. */
const TableName = "bench-floor-calls";
const client = localDynamoDbClient(endpoint);
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

const context = testToolContext(undefined);
const app = new Hono();
app.post("/runs/:runId/calls", async (c) => {
  const body = (await c.req.json()) as { callId: string; input: unknown };
  const input = readabilityInput.parse(body.input);
  const Key = { pk: { S: `RUN#${c.req.param("runId")}` }, sk: { S: `CALL#${body.callId}` } };
  await client.send(
    new PutItemCommand({
      TableName,
      Item: { ...Key, status: { S: "running" }, input: { S: JSON.stringify(input) } },
      ConditionExpression: "attribute_not_exists(pk)",
    }),
  );
  const outcome = await readabilityAnalyzer.execute(input, context);
  const result = { status: "succeeded", output: outcome.output, data: outcome.data };
  await client.send(
    new UpdateItemCommand({
      TableName,
      Key,
      UpdateExpression: "SET #status = :done, #result = :result",
      ExpressionAttributeNames: { "#status": "status", "#result": "result" },
      ExpressionAttributeValues: {
        ":done": { S: "succeeded" },
        ":result": { S: JSON.stringify(result) },
      },
    }),
  );
  return c.json(result);
});

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
  process.stdout.write(`${info.port}\n`);
});
server.on("error", (error) => {
  console.error(error);
  process.exit(1);
});
