import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { testToolContext } from "@toolbus/core/testing";
import { readabilityAnalyzer } from "@toolbus/tools/readability";
import { composeLocalToolbus, serveApi } from "../packages/local/src";
import { LocalEventBus, localEventBridgeClient } from "../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import { type Measurement, measurement, percentile, runConcurrently } from "./stats";

const TOTAL = 2_000;
const CLIENTS = 32;
const TEXT = "Toolbus serves optional tools to AI agents. Every call is announced on the bus.";

interface Run {
  throughput: number;
  p50: number;
  p99: number;
}

function summarize(latencies: number[], elapsedMs: number): Run {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    throughput: (latencies.length / elapsedMs) * 1000,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
}

/** Baseline: the tool's own function in this process, same calls and clients. */
async function inProcess(): Promise<Run> {
  const context = testToolContext(undefined);
  const latencies: number[] = [];
  const started = performance.now();
  await runConcurrently(TOTAL, CLIENTS, async (i) => {
    const t0 = performance.now();
    await readabilityAnalyzer.execute({ text: `${TEXT} #${i}` }, context);
    latencies.push(performance.now() - t0);
  });
  return summarize(latencies, performance.now() - started);
}

/**
 * The load test's scenario with timing: 2,000 calls from 32 clients over HTTP, each client
 * its own run, accepted with wait: 0. Latency is accept time (POST answered); throughput is
 * calls finished per second, from the first POST until the bus is drained (every result
 * recorded).
 */
async function overHttp(url: string, adminKey: string, bus: LocalEventBus): Promise<Run> {
  const runs = Array.from({ length: CLIENTS }, () => `bench-load-${randomUUID()}`);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    runs.map(async (runId) => {
      while (next < TOTAL) {
        const i = next++;
        const t0 = performance.now();
        const response = await fetch(`${url}/v1/runs/${runId}/calls`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
          body: JSON.stringify({
            tool: "readability_analyzer",
            input: { text: `${TEXT} #${i}` },
            wait: 0,
          }),
        });
        await response.arrayBuffer();
        if (response.status >= 500) throw new Error(`load call answered ${response.status}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  await bus.drain();
  return summarize(latencies, performance.now() - started);
}

export async function benchLoad(): Promise<Measurement[]> {
  const db = await startDynamoDbLocal();
  const dynamodb = localDynamoDbClient(db.endpoint);
  const bus = new LocalEventBus({ delivery: { baseDelayMs: 20, maxDelayMs: 500 } });
  const eventBridge = localEventBridgeClient({ bus });
  const adminKey = `bench-${randomUUID()}`;
  try {
    const { app } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: "toolbus-bench-load",
      busName: "toolbus-bench-load",
      adminKey,
    });
    const server = await serveApi(app, { port: 0 });
    try {
      const baseline = await inProcess();
      const load = await overHttp(server.url, adminKey, bus);
      const base = (value: number) => ({
        name: `readability_analyzer called in-process, ${CLIENTS} clients`,
        value,
      });
      const label = `load: ${TOTAL} calls from ${CLIENTS} clients over HTTP`;
      return [
        measurement(
          `${label}, calls/s`,
          "calls/s",
          load.throughput,
          base(baseline.throughput),
          "higher",
        ),
        measurement(`${label}, accept p50`, "ms", load.p50, base(baseline.p50), "lower"),
        measurement(`${label}, accept p99`, "ms", load.p99, base(baseline.p99), "lower"),
      ];
    } finally {
      await server.close();
    }
  } finally {
    bus.close();
    eventBridge.destroy();
    dynamodb.destroy();
    await db.stop();
  }
}
