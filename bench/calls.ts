import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { testToolContext } from "@toolbus/core/testing";
import { readabilityAnalyzer } from "@toolbus/tools/readability";
import { composeLocalToolbus, serveApi } from "../packages/local/src";
import {
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import { type Measurement, measurement, percentile, runConcurrently } from "./stats";

const TEXT =
  "Toolbus serves optional tools to AI agents. Every call is announced on the bus, run by its own handler, and recorded under the run that asked for it.";
const CALLS = { 1: 150, 16: 600 } as const;

interface Run {
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
}

function summarize(latencies: number[], elapsedMs: number): Run {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    throughput: (latencies.length / elapsedMs) * 1000,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
  };
}

/** The floor: the tool's own function, called directly in this process. */
async function inProcess(concurrency: number, total: number): Promise<Run> {
  const latencies: number[] = [];
  const context = testToolContext(undefined);
  const started = performance.now();
  await runConcurrently(total, concurrency, async () => {
    const t0 = performance.now();
    await readabilityAnalyzer.execute({ text: TEXT }, context);
    latencies.push(performance.now() - t0);
  });
  return summarize(latencies, performance.now() - started);
}

/** HTTP -> DynamoDB -> bus -> handler -> DynamoDB -> bus (recorder) -> HTTP, synchronously. */
async function wholePath(url: string, adminKey: string, concurrency: number, total: number) {
  const latencies: number[] = [];
  const runId = `bench-${randomUUID()}`;
  const started = performance.now();
  await runConcurrently(total, concurrency, async () => {
    const t0 = performance.now();
    const response = await fetch(`${url}/v1/runs/${runId}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "readability_analyzer", input: { text: TEXT }, wait: 20 }),
    });
    const body = (await response.json()) as { status?: string };
    if (response.status !== 200 || body.status !== "succeeded") {
      throw new Error(`call failed: ${response.status} ${JSON.stringify(body)}`);
    }
    latencies.push(performance.now() - t0);
  });
  return summarize(latencies, performance.now() - started);
}

export async function benchCalls(): Promise<Measurement[]> {
  const dynamo = await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const busServer = await startEventBridgeServer(bus);
  const eventBridge = localEventBridgeClient({ endpoint: busServer.endpoint });
  const dynamodb = localDynamoDbClient(dynamo.endpoint);
  const adminKey = `bench-${randomUUID()}-admin-key`;
  try {
    const { app } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: "toolbus-bench",
      busName: "toolbus-bench",
      adminKey,
    });
    const api = await serveApi(app, { port: 0 });
    try {
      await wholePath(api.url, adminKey, 4, 40); // warm-up
      await inProcess(1, 200);
      const results: Measurement[] = [];
      for (const concurrency of [1, 16] as const) {
        const floor = await inProcess(concurrency, CALLS[concurrency]);
        const path = await wholePath(api.url, adminKey, concurrency, CALLS[concurrency]);
        const base = (value: number) => ({
          name: `readability_analyzer called in-process, ${concurrency} client(s)`,
          value,
        });
        const label = `sync call, whole path, ${concurrency} client(s)`;
        results.push(
          measurement(
            `${label}: calls/s`,
            "calls/s",
            path.throughput,
            base(floor.throughput),
            "higher",
          ),
          measurement(`${label}: p50`, "ms", path.p50, base(floor.p50), "lower"),
          measurement(`${label}: p95`, "ms", path.p95, base(floor.p95), "lower"),
          measurement(`${label}: p99`, "ms", path.p99, base(floor.p99), "lower"),
        );
      }
      return results;
    } finally {
      await api.close();
    }
  } finally {
    await bus.drain();
    bus.close();
    eventBridge.destroy();
    dynamodb.destroy();
    await busServer.close();
    await dynamo.stop();
  }
}
