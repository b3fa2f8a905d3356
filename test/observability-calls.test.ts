import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  createToolHandler,
  defineTool,
  ensureTable,
  parseStageConfig,
  ToolFailure,
} from "@toolbus/core";
import { offlineHttp, toolDeps } from "@toolbus/core/compose/tool";
import { DynamoCallStore } from "@toolbus/core/store/dynamodb";
import type { AnyToolDefinition } from "@toolbus/core/tool-definition";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { scheduledDetail } from "../packages/core/src/app/calls/lifecycle";
import { createLogger, type LogRecord } from "../packages/core/src/observability/log";
import { InProcessMetrics } from "../packages/core/src/observability/metrics";
import { LocalEventBus, localEventBridgeClient } from "../packages/local/src/bus";
import { Failures } from "../packages/wire/src/model/failure";
import { pendingCall } from "./support/calls";
import { testDynamoDbClient } from "./support/dynamodb";

/**
 * Real calls through a tool's handler (DynamoDB Local, the local bus, the real result cache
 * and rate limiter) write one "call finished" line each and count in the call metrics:
 * success, failure, cache hit, fallback and rate limit, as a stage's logs and metrics show them.
 */
const tableName = `observe-${Date.now().toString(36)}`;
const busName = "observe";
const bus = new LocalEventBus();
const dynamodb = testDynamoDbClient();
const eventBridge = localEventBridgeClient({ bus });
const calls = new DynamoCallStore({ client: DynamoDBDocumentClient.from(dynamodb), tableName });
const lines: LogRecord[] = [];
const metrics = new InProcessMetrics();
const SECRET_INPUT = "sk-live-do-not-log-me";

const spec = (id: string) => ({
  id,
  toolset: "observe",
  title: id,
  description: `${id}, for the observability tests.`,
  category: "utility" as const,
  usageHint: "tests",
});
const input = z.object({ text: z.string() });
const output = z.object({ length: z.number() });
const measure = async ({ text }: { text: string }) => ({
  output: `${text.length} characters`,
  data: { length: text.length },
});

const cached = defineTool({
  spec: { ...spec("obs_cached"), cache: { ttlSeconds: 60 } },
  input,
  output,
  execute: measure,
});
const failing = defineTool({
  spec: spec("obs_failing"),
  input,
  output,
  execute: async () => {
    throw new ToolFailure(Failures.upstreamError("The upstream answered 503."));
  },
});
const limited = defineTool({
  spec: { ...spec("obs_limited"), rateLimit: { perPrincipal: { limit: 1, windowSeconds: 60 } } },
  input,
  output,
  execute: measure,
});
const backup = defineTool({ spec: spec("obs_backup"), input, output, execute: measure });
const primary = defineTool({
  spec: { ...spec("obs_primary"), requires: ["obs_missing"], fallback: "obs_backup" },
  input,
  output,
  execute: measure,
});

const deps = () =>
  toolDeps(
    {
      config: parseStageConfig({ stage: "observe" }),
      tableName,
      busName,
      dynamodb,
      eventBridge,
      secret: () => undefined,
      log: createLogger({
        service: "toolbus",
        fields: { stage: "observe" },
        sink: (line) => lines.push(line),
      }),
      metrics,
    },
    offlineHttp,
    { fallbacks: [backup] },
  );

beforeAll(async () => {
  await ensureTable(dynamodb, tableName);
  await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
});
afterAll(() => bus.close());

let sequence = 0;
async function call(tool: AnyToolDefinition, text = SECRET_INPUT) {
  const record = pendingCall(
    tool.spec.id,
    { text },
    {
      callId: `call-${++sequence}`,
      toolset: "observe",
      requestedBy: { id: "key-observer", role: "member" },
      // As the API records it once selection let the fallback answer for this caller.
      ...(tool.spec.fallback
        ? { fallbackAccess: { tool: tool.spec.fallback, allowed: true, reasons: [] } }
        : {}),
    },
  );
  await calls.create(record);
  await createToolHandler(
    tool,
    deps,
  )({
    source: "toolbus",
    "detail-type": "ToolCallScheduled",
    time: record.scheduledAt,
    detail: scheduledDetail(record),
  });
  const line = lines.find((l) => l.callId === record.callId);
  if (!line) throw new Error(`no line for ${record.callId}`);
  return line;
}

const counter = (name: string, dimensions: Record<string, string>) =>
  metrics
    .snapshot()
    .counters.find(
      (c) => c.name === name && JSON.stringify(c.dimensions) === JSON.stringify(dimensions),
    )?.value;

describe("a finished call's log line and metrics", () => {
  it("says who called which tool, how it went and how long it took, never its input", async () => {
    const line = await call(cached);
    expect(line).toMatchObject({
      level: "INFO",
      message: "call finished",
      service: "toolbus",
      stage: "observe",
      parentRunId: "run-1",
      toolId: "obs_cached",
      principal: "key-observer",
      outcome: "succeeded",
      cache: "miss",
      dispatch: "bus",
      durationMs: expect.any(Number),
    });
    expect(JSON.stringify(lines)).not.toContain(SECRET_INPUT);
  });

  it("reports a cache hit", async () => {
    expect(await call(cached)).toMatchObject({ outcome: "succeeded", cache: "hit" });
    expect(counter("cacheHits", { toolId: "obs_cached" })).toBe(1);
    expect(counter("cacheMisses", { toolId: "obs_cached" })).toBe(1);
    expect(counter("calls", { toolId: "obs_cached" })).toBe(2);
  });

  it("reports a failure by kind", async () => {
    expect(await call(failing)).toMatchObject({
      outcome: "failed",
      failureKind: "upstream_error",
      cache: "none",
    });
    expect(counter("failures", { failureKind: "upstream_error" })).toBe(1);
    expect(counter("failed", { toolId: "obs_failing" })).toBe(1);
  });

  it("reports a rate-limited call", async () => {
    expect(await call(limited, "first")).toMatchObject({ outcome: "succeeded" });
    expect(await call(limited, "second")).toMatchObject({
      outcome: "failed",
      failureKind: "rate_limited",
    });
    expect(counter("rateLimited", { toolId: "obs_limited" })).toBe(1);
  });

  it("reports a fallback", async () => {
    expect(await call(primary)).toMatchObject({ outcome: "succeeded", fallback: "obs_backup" });
    expect(counter("fallbacks", { toolId: "obs_primary" })).toBe(1);
    const latency = metrics.snapshot().latencies.find((l) => l.dimensions.toolId === "obs_cached");
    expect(latency).toMatchObject({ name: "duration", count: 2 });
  });
});
