import { randomBytes, randomUUID } from "node:crypto";
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  createToolbus,
  type Deployment,
  ensureTable,
  parseStageConfig,
  type Toolbus,
} from "@toolbus/core";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { LocalEventBus, localEventBridgeClient } from "@toolbus/local/bus";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "./support/dynamodb";
import {
  type AskingServer,
  startLegacyAskingServer,
  startModernAskingServer,
} from "./support/mcp-asking-servers";
import { registeredMcpDispatcher } from "./support/registered-function";

// The relay as it runs on AWS: the API and the registered MCP servers' function are separate
// units on separate pieces (each its own relay through the table, as two Lambda functions
// would be), joined by a dispatcher that hands the function the Invoke payload as JSON. The
// streaming Function URL's app carries a call's requests to its caller; the API Gateway app,
// which buffers, refuses them to a 2025-11-25 caller at once and keeps 2026-07-28 rounds.

const dynamodb = testDynamoDbClient();
const bus = new LocalEventBus({ delivery: { baseDelayMs: 5, maxDelayMs: 50 } });
const eventBridge = localEventBridgeClient({ bus });
const tableName = `toolbus-aws-relay-${randomUUID().slice(0, 8)}`;
const BUS_NAME = "toolbus-aws-relay";
const adminKey = `test-admin-${randomBytes(18).toString("base64url")}`;

/** One Lambda function's view of the stage: its own pieces, the same table and bus. */
function functionDeployment(): Deployment {
  return {
    config: parseStageConfig({ outbound: { allowHosts: ["127.0.0.1"] } }),
    tableName,
    busName: BUS_NAME,
    adminKey,
    dynamodb,
    eventBridge,
  };
}

let legacy: AskingServer;
let modern: AskingServer;
let toolbus: Toolbus;
let streaming: ApiServer;
let buffered: ApiServer;
let invoked = 0;

beforeAll(async () => {
  [legacy, modern] = await Promise.all([startLegacyAskingServer(), startModernAskingServer()]);
  await ensureTable(dynamodb, tableName);
  await eventBridge.send(new CreateEventBusCommand({ Name: BUS_NAME }));
  // functions/registered/mcp.ts, on its own deployment, invoked as Lambda would be.
  const dispatcher = registeredMcpDispatcher(functionDeployment, () => {
    invoked++;
  });
  toolbus = createToolbus(
    functionDeployment(),
    { tools: builtinTools, toolsets: builtinToolsets, capabilities: builtinCapabilities },
    { dispatcher },
  );
  await toolbus.seed();
  streaming = await serveApi(
    createApi({ ...toolbus.apiDeps, surface: "streaming", allowedHosts: "any" }),
    { port: 0 },
  );
  buffered = await serveApi(
    createApi({ ...toolbus.apiDeps, followBuffered: true, allowedHosts: "any" }),
    { port: 0 },
  );
  for (const [name, server] of [
    ["asking_2025", legacy],
    ["asking_2026", modern],
  ] as const) {
    const registered = await fetch(`${buffered.url}/v1/registered-toolsets/${name}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        kind: "mcp",
        name,
        description: "A server that asks its client",
        owner: "team-relay",
        url: server.url,
        defaults: { category: "research", timeoutMs: 10_000 },
      }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([streaming?.close(), buffered?.close()]);
  await toolbus?.settled();
  await bus.drain();
  bus.close();
  await Promise.all([legacy?.close(), modern?.close()]);
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
});

const requestInit = () => ({ headers: { authorization: `Bearer ${adminKey}` } });

async function legacyClient(url: string, name: string) {
  const client = new ClientV1(
    { name: "aws-relay-test", version: "1" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { name },
  }));
  await client.connect(new TransportV1(new URL(`${url}/mcp`), { requestInit: requestInit() }));
  return client;
}

async function modernClient(url: string, name: string) {
  const client = new ClientV2(
    { name: "aws-relay-test", version: "2" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept" as const,
    content: { name },
  }));
  await client.connect(new TransportV2(new URL(`${url}/mcp`), { requestInit: requestInit() }));
  return client;
}

const textOf = (result: unknown) =>
  ((result as { content: Array<{ text?: string }> }).content ?? [])
    .map((block) => block.text ?? "")
    .join("");

describe("the relay through the table, between the API and a tool's function", () => {
  it("carries a 2025-11-25 server's elicitation to a caller on the streaming endpoint and back", async () => {
    const before = invoked;
    const client = await legacyClient(streaming.url, "Ada");
    try {
      const steps: number[] = [];
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      expect(textOf(result)).toBe("Hello, Ada!");
      await client.callTool({ name: "three_steps", arguments: {} }, undefined, {
        onprogress: (step) => {
          steps.push(step.progress);
        },
      });
      expect(steps).toEqual([1, 2, 3]);
      // The calls ran in the function, not in the API.
      expect(invoked - before).toBe(2);
    } finally {
      await client.close();
    }
  });

  it("runs a 2026-07-28 round through API Gateway, which buffers", async () => {
    const client = await modernClient(buffered.url, "Grace");
    try {
      expect(textOf(await client.callTool({ name: "greet", arguments: {} }))).toBe("Hello, Grace!");
      expect(textOf(await client.callTool({ name: "ask_name", arguments: {} }))).toBe(
        "Hello, Grace!",
      );
    } finally {
      await client.close();
    }
  });

  it("refuses a 2025-11-25 caller's requests at once through API Gateway, answered in JSON", async () => {
    const client = await legacyClient(buffered.url, "Ada");
    try {
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Method not found/i);
    } finally {
      await client.close();
    }
  });
});
