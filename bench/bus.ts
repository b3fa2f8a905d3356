import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import {
  CreateEventBusCommand,
  type EventBridgeClient,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
} from "@aws-sdk/client-eventbridge";
import {
  generateLocalCredentials,
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { type Measurement, measurement, percentile, runConcurrently } from "./stats";

const EVENTS = 2_000;
const CONCURRENCY = 16;

interface Run {
  throughput: number;
  p50: number;
  p99: number;
}

/** Baseline: the same SDK call against an HTTP server that only returns a canned answer. */
async function sdkRoundTripBaseline(): Promise<Run> {
  const reply = JSON.stringify({ FailedEntryCount: 0, Entries: [{ EventId: "x" }] });
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = localEventBridgeClient({
    endpoint: `http://127.0.0.1:${port}`,
    credentials: generateLocalCredentials(),
  });
  const latencies: number[] = [];
  const started = performance.now();
  await runConcurrently(EVENTS, CONCURRENCY, async (i) => {
    const sent = performance.now();
    await client.send(new PutEventsCommand({ Entries: [entry(i, sent)] }));
    latencies.push(performance.now() - sent);
  });
  const elapsed = performance.now() - started;
  client.destroy();
  server.close();
  return summarize(latencies, elapsed);
}

/** PutEvents until the matching rule's in-process function has the event. */
async function busDelivery(transport: "http" | "in-process"): Promise<Run> {
  const bus = new LocalEventBus();
  const server = transport === "http" ? await startEventBridgeServer(bus) : undefined;
  const client: EventBridgeClient = server
    ? localEventBridgeClient(server)
    : localEventBridgeClient({ bus });
  const latencies: number[] = [];
  const arn = bus.registerFunction("sink", (event) => {
    const { sentAt } = (event as { detail: { sentAt: number } }).detail;
    latencies.push(performance.now() - sentAt);
  });
  await client.send(new CreateEventBusCommand({ Name: "bench" }));
  await client.send(
    new PutRuleCommand({
      Name: "calls",
      EventBusName: "bench",
      EventPattern: JSON.stringify({ source: ["toolbus"], detail: { toolId: ["web_search"] } }),
    }),
  );
  await client.send(
    new PutTargetsCommand({
      Rule: "calls",
      EventBusName: "bench",
      Targets: [{ Id: "sink", Arn: arn }],
    }),
  );
  const started = performance.now();
  await runConcurrently(EVENTS, CONCURRENCY, async (i) => {
    await client.send(
      new PutEventsCommand({
        Entries: [{ ...entry(i, performance.now()), EventBusName: "bench" }],
      }),
    );
  });
  await bus.drain();
  const elapsed = performance.now() - started;
  if (latencies.length !== EVENTS) throw new Error(`delivered ${latencies.length} of ${EVENTS}`);
  client.destroy();
  bus.close();
  await server?.close();
  return summarize(latencies, elapsed);
}

function entry(i: number, sentAt: number) {
  return {
    Source: "toolbus",
    DetailType: "ToolCallScheduled",
    Detail: JSON.stringify({ toolId: "web_search", callId: `c${i}`, sentAt }),
  };
}

function summarize(latencies: number[], elapsedMs: number): Run {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    throughput: (latencies.length / elapsedMs) * 1000,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
}

export async function benchBus(): Promise<Measurement[]> {
  // Warm-up of every path first (JIT, SDK and socket set-up), so order does not bias results.
  await sdkRoundTripBaseline();
  await busDelivery("http");
  await busDelivery("in-process");
  const baseline = await sdkRoundTripBaseline();
  const overHttp = await busDelivery("http");
  const inProcess = await busDelivery("in-process");
  const base = (value: number) => ({
    name: "SDK PutEvents round trip to a canned HTTP server",
    value,
  });
  return [
    measurement(
      "bus over HTTP: PutEvents -> delivery, events/s",
      "events/s",
      overHttp.throughput,
      base(baseline.throughput),
      "higher",
    ),
    measurement(
      "bus over HTTP: PutEvents -> delivery, p50",
      "ms",
      overHttp.p50,
      base(baseline.p50),
      "lower",
    ),
    measurement(
      "bus over HTTP: PutEvents -> delivery, p99",
      "ms",
      overHttp.p99,
      base(baseline.p99),
      "lower",
    ),
    measurement(
      "bus in-process: PutEvents -> delivery, events/s",
      "events/s",
      inProcess.throughput,
      base(baseline.throughput),
      "higher",
    ),
    measurement(
      "bus in-process: PutEvents -> delivery, p50",
      "ms",
      inProcess.p50,
      base(baseline.p50),
      "lower",
    ),
    measurement(
      "bus in-process: PutEvents -> delivery, p99",
      "ms",
      inProcess.p99,
      base(baseline.p99),
      "lower",
    ),
  ];
}
