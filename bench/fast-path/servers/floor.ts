/**
 * The floor of a persisted call: a bare Hono route that validates the input, writes the call
 * (one conditional PutItem), runs readability_analyzer in this process and stores its result
 * (one UpdateItem), on the DynamoDB Local that the Toolbus under test uses, through the same
 * AWS SDK client. No auth, no bus, no log: what any server keeping its calls must at least do.
 * Takes the endpoint in FLOOR_DYNAMODB_ENDPOINT; prints its port on stdout once it listens.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { testToolContext } from "@toolbus/core/testing";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { readabilityAnalyzer, readabilityInput } from "@toolbus/tools/readability";
import { Hono } from "hono";
import { ensureKeysOnlyTable, persistCall } from "../../persisted-call";

const endpoint = process.env.FLOOR_DYNAMODB_ENDPOINT;
if (!endpoint) throw new Error("FLOOR_DYNAMODB_ENDPOINT is not set");
/** A table of its own, keys only, so nothing of Toolbus's layout (indexes) is counted. */
const TableName = "bench-floor-calls";
const client = localDynamoDbClient(endpoint);
await ensureKeysOnlyTable(client, TableName);

const context = testToolContext(undefined);
const app = new Hono();
app.post("/runs/:runId/calls", async (c) => {
  const body = (await c.req.json()) as { callId: string; input: unknown };
  const input = readabilityInput.parse(body.input);
  let result: Record<string, unknown> = {};
  await persistCall(client, TableName, {
    runId: c.req.param("runId"),
    callId: body.callId,
    input: JSON.stringify(input),
    result: async () => {
      const outcome = await readabilityAnalyzer.execute(input, context);
      result = { status: "succeeded", output: outcome.output, data: outcome.data };
      return JSON.stringify(result);
    },
  });
  return c.json(result);
});

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
  process.stdout.write(`${info.port}\n`);
});
server.on("error", (error) => {
  console.error(error);
  process.exit(1);
});
