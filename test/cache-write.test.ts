import { defineTool, parseStageConfig, toolSpecOf } from "@toolbus/core";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { createHttpClient } from "@toolbus/core/outbound";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { cacheKey, runWithPolicies } from "../packages/core/src/runtime/policies";
import { createDocumentClient, DynamoResultCache } from "../packages/core/src/store/dynamodb";
import { createTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

// A cache write that DynamoDB refuses costs the caller nothing: the tool's result stands, and
// the refusal is logged. The refusal is real: this table indexes `freshUntil` as a string, so
// DynamoDB Local rejects every cache item (whose freshUntil is a number), while reads work.

const client = testDynamoDbClient();
let table: TestTable;
let cache: DynamoResultCache;

beforeAll(async () => {
  table = await createTestTable(client, {
    namePrefix: "cache-write",
    AttributeDefinitions: [{ AttributeName: "freshUntil", AttributeType: "S" }],
    GlobalSecondaryIndexes: [
      {
        IndexName: "by-fresh",
        KeySchema: [{ AttributeName: "freshUntil", KeyType: "HASH" }],
        Projection: { ProjectionType: "KEYS_ONLY" },
      },
    ],
  });
  cache = new DynamoResultCache({
    client: createDocumentClient(client),
    tableName: table.tableName,
  });
});
afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const answer = defineTool({
  spec: {
    id: "test_cached_answer",
    toolset: "test_cache_write",
    title: "Cached answer",
    description: "Answers 42, cacheably.",
    category: "utility",
    usageHint: "tests",
    cache: { ttlSeconds: 60 },
  },
  input: z.object({ question: z.string() }),
  output: z.object({ n: z.number() }),
  execute: async () => ({ output: "Forty-two.", data: { n: 42 } }),
});

describe("a cache write DynamoDB refuses", () => {
  it("is logged, and the call keeps its result", async () => {
    const config = parseStageConfig({});
    const lines: LogRecord[] = [];
    const log = createLogger({ service: "toolbus", sink: (line) => lines.push(line) });
    const outcome = await runWithPolicies(
      answer,
      {
        parentRunId: "run-cache-write",
        callId: "call-1",
        toolId: answer.spec.id,
        toolset: answer.spec.toolset,
        input: { question: "life" },
        requestedBy: { id: "key-1", role: "member" },
        scheduledAt: new Date().toISOString(),
      },
      {
        config,
        http: createHttpClient(config.outbound),
        secret: () => undefined,
        capabilities: [],
        cache,
        log,
        now: () => new Date(),
      },
    );
    expect(outcome).toMatchObject({
      execution: { ok: true, output: "Forty-two.", data: { n: 42 } },
      cached: false,
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "WARN",
        message: "A result could not be cached",
        toolId: answer.spec.id,
        error: expect.objectContaining({ message: expect.any(String) }),
      }),
    );
    // The refusal was DynamoDB's: nothing was stored.
    const key = cacheKey(toolSpecOf(answer), { question: "life" });
    expect(await cache.get(key, Date.now())).toBeUndefined();
  });
});
