import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createToolHandler, ensureTable, parseStageConfig } from "@toolbus/core";
import { declaredToolDeps } from "@toolbus/core/compose/tool-entry";
import { DynamoCallStore } from "@toolbus/core/store/dynamodb";
import type { DeployableTool } from "@toolbus/core/tool-definition";
import { readabilityAnalyzer } from "@toolbus/tools/readability";
import { staticLinks } from "@toolbus/tools/static-links";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scheduledDetail } from "../packages/core/src/app/calls/lifecycle";
import { LocalEventBus, localEventBridgeClient } from "../packages/local/src/bus";
import { pendingCall } from "./support/calls";
import { testDynamoDbClient } from "./support/dynamodb";

/**
 * The tools whose functions carry no outbound client (functions/tools/readability_analyzer.ts,
 * static_links.ts) run whole calls with the client that refuses every request: claimed,
 * run, stored and announced against DynamoDB Local and the local bus.
 */
const tableName = `offline-${Date.now().toString(36)}`;
const busName = "offline-tools";
const bus = new LocalEventBus();
const dynamodb = testDynamoDbClient();
const eventBridge = localEventBridgeClient({ bus });
const deployment = {
  config: parseStageConfig({
    stage: "offline",
    tools: {
      static_links: {
        links: [{ platform: "website", url: "https://example.com/", label: "Example" }],
      },
    },
  }),
  tableName,
  busName,
  dynamodb,
  eventBridge,
  secret: () => undefined,
};
const calls = new DynamoCallStore({ client: DynamoDBDocumentClient.from(dynamodb), tableName });

beforeAll(async () => {
  await ensureTable(dynamodb, tableName);
  await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
});
afterAll(() => bus.close());

/** The tool's call, run with what its definition declares, as its own function runs it. */
async function runRecordedCall(tool: DeployableTool, input: unknown) {
  const call = pendingCall(tool.spec.id, input, { toolset: tool.spec.toolset });
  await calls.create(call);
  const handler = createToolHandler(tool, () => declaredToolDeps(tool.needs, deployment));
  await handler({
    source: "toolbus",
    "detail-type": "ToolCallScheduled",
    time: call.scheduledAt,
    detail: scheduledDetail(call),
  });
  return calls.get(call.parentRunId, call.callId);
}

describe("tools whose functions have no network", () => {
  it("analyses readability end to end", async () => {
    const done = await runRecordedCall(readabilityAnalyzer, {
      text: "The cat sat on the mat. It was a sunny day.",
    });
    expect(done?.status).toBe("succeeded");
    expect(done?.result?.data).toMatchObject({ sentences: 2 });
  });

  it("lists static links end to end", async () => {
    const done = await runRecordedCall(staticLinks, { limit: 5 });
    expect(done?.result?.failure).toBeUndefined();
    expect(done?.status).toBe("succeeded");
    expect(JSON.stringify(done?.result?.data)).toContain("https://example.com/");
  });

  it("refuses any request such a tool makes anyway, as blocked", async () => {
    const { http } = declaredToolDeps(readabilityAnalyzer.needs, deployment);
    await expect(http.request("https://example.com/")).rejects.toMatchObject({
      name: "OutboundError",
      kind: "blocked",
    });
  });
});
