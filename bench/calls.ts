import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
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

const FEED = `<?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title><link>https://example.org/</link>
<item><title>One</title><link>https://example.org/1</link><pubDate>Sat, 21 Nov 2026 10:00:00 GMT</pubDate></item>
</channel></rss>`;

/** A feed upstream on loopback that takes a fixed 50 ms, like a nearby real server. */
export async function slowFeedServer(): Promise<{ url: string; close(): void }> {
  const server = createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/rss+xml" });
      res.end(FEED);
    }, 50);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

/**
 * rss_feed calls through the whole path: each a miss (new URL) or each a hit (same URL).
 * Few enough to stay under rss_feed's own per-principal limit (60 a minute).
 */
async function feedCalls(
  url: string,
  adminKey: string,
  feed: (i: number) => string,
  total: number,
) {
  const latencies: number[] = [];
  const runId = `bench-${randomUUID()}`;
  const started = performance.now();
  await runConcurrently(total, 1, async () => {
    const i = latencies.length;
    const t0 = performance.now();
    const response = await fetch(`${url}/v1/runs/${runId}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        tool: "rss_feed",
        input: { action: "fetch", url: feed(i) },
        wait: 20,
      }),
    });
    const body = (await response.json()) as { status?: string };
    if (body.status !== "succeeded") throw new Error(`feed call failed: ${JSON.stringify(body)}`);
    latencies.push(performance.now() - t0);
  });
  return summarize(latencies, performance.now() - started);
}

export async function benchCalls(): Promise<Measurement[]> {
  // Calls answered directly are announced just after: wait for that before stopping the bus.
  let settle = async () => {};
  const dynamo = await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const busServer = await startEventBridgeServer(bus);
  const eventBridge = localEventBridgeClient(busServer);
  const dynamodb = localDynamoDbClient(dynamo.endpoint);
  const adminKey = `bench-${randomUUID()}-admin-key`;
  try {
    const { app, toolbus } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: "toolbus-bench",
      busName: "toolbus-bench",
      adminKey,
      config: { outbound: { allowHosts: ["127.0.0.1"] } },
    });
    settle = () => toolbus.settled();
    const api = await serveApi(app, { port: 0 });
    const upstream = await slowFeedServer();
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
      await feedCalls(api.url, adminKey, (i) => `${upstream.url}/warm-${i}.xml`, 3);
      const miss = await feedCalls(api.url, adminKey, (i) => `${upstream.url}/miss-${i}.xml`, 20);
      await feedCalls(api.url, adminKey, () => `${upstream.url}/hit.xml`, 1);
      const hit = await feedCalls(api.url, adminKey, () => `${upstream.url}/hit.xml`, 20);
      const missBase = (value: number) => ({
        name: "the same call, cache miss (upstream answers in 50 ms)",
        value,
      });
      results.push(
        measurement(
          "rss_feed via the whole path, cache hit: p50",
          "ms",
          hit.p50,
          missBase(miss.p50),
          "lower",
        ),
        measurement(
          "rss_feed via the whole path, cache hit: p95",
          "ms",
          hit.p95,
          missBase(miss.p95),
          "lower",
        ),
      );
      return results;
    } finally {
      upstream.close();
      await api.close();
    }
  } finally {
    await settle();
    await bus.drain();
    bus.close();
    eventBridge.destroy();
    dynamodb.destroy();
    await busServer.close();
    await dynamo.stop();
  }
}
