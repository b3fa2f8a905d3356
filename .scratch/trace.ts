import { randomUUID } from "node:crypto";
import { composeLocalToolbus } from "../packages/local/src";
import { LocalEventBus, localEventBridgeClient, startEventBridgeServer } from "../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
const dynamo = await startDynamoDbLocal();
const bus = new LocalEventBus();
const busServer = await startEventBridgeServer(bus);
const adminKey = `bench-${randomUUID()}-admin-key`;
const client = localDynamoDbClient(dynamo.endpoint);
let t0 = 0;
const log: string[] = [];
let tracing = false;
client.middlewareStack.add((next, ctx) => async (args) => {
  const s = performance.now();
  try { return await next(args); } finally {
    if (tracing) log.push(`${(s - t0).toFixed(2)} +${(performance.now() - s).toFixed(2)} ${ctx.commandName} ${JSON.stringify((args.input as any).Key ?? (args.input as any).Item?.pk ?? (args.input as any).KeyConditionExpression ?? "").slice(0, 70)}`);
  }
}, { step: "initialize", name: "trace" });
const { app, toolbus } = await composeLocalToolbus({ dynamodb: client, eventBridge: localEventBridgeClient(busServer), bus, tableName: "toolbus-trace", busName: "toolbus-trace", adminKey, inProcessBus: true } as any);
const key = (await (await app.request("/v1/keys", { method: "POST", headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }, body: JSON.stringify({ name: "m", role: "member" }) })).json()) as any;
const h = { authorization: `Bearer ${key.key}`, "content-type": "application/json" };
const body = JSON.stringify({ tool: "readability_analyzer", input: { text: "The cat sat on the mat." }, wait: 20 });
const run = `r-${randomUUID()}`;
for (let i = 0; i < 300; i++) await (await app.request(`/v1/runs/${run}/calls`, { method: "POST", headers: h, body })).text();
await toolbus.settled();
const times: number[] = [];
for (let i = 0; i < 300; i++) { const s = performance.now(); await (await app.request(`/v1/runs/${run}/calls`, { method: "POST", headers: h, body })).text(); times.push(performance.now() - s); }
times.sort((a, b) => a - b); console.log("p50 in-process app.request", times[150].toFixed(2));
await toolbus.settled();
for (let k = 0; k < 3; k++) {
  tracing = true; log.length = 0; t0 = performance.now();
  const r = await app.request(`/v1/runs/${run}/calls`, { method: "POST", headers: h, body });
  await r.text();
  const answered = performance.now() - t0;
  await toolbus.settled();
  tracing = false;
  console.log(`--- answered at ${answered.toFixed(2)} ms`);
  for (const l of log) console.log(l);
}
await busServer.close(); await dynamo.stop();
