import { performance } from "node:perf_hooks";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { percentile, runConcurrently } from "../stats";

/** The same short text for every server, as in the calls group. */
export const TEXT =
  "Toolbus serves optional tools to AI agents. Every call is announced on the bus, run by its own handler, and recorded under the run that asked for it.";

export interface HttpCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** An answer as the targets' checks read it: the HTTP status and the parsed body. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * One way of calling readability_analyzer. HTTP targets all go through the same client code
 * (`post` below), so only the server differs between them; the MCP SDK target goes through
 * the official client, as agents call MCP servers.
 */
export interface Target {
  name: string;
  /** `runId` is fresh per phase (Toolbus records calls under it); bare servers ignore it. */
  send(runId: string, callId: string, index: number): Promise<Answer>;
  /** Why an answer is not a successful result, or undefined when it is one. */
  problem(status: number, body: unknown): string | undefined;
}

/** A target that is one HTTP request per call, sent with `fetch`. */
function overHttp(request: (runId: string, callId: string, index: number) => HttpCall) {
  return (runId: string, callId: string, index: number) => post(request(runId, callId, index));
}

export interface Phase {
  runId: string;
  latencies: number[];
  elapsedMs: number;
  callIds: string[];
}

export interface Figures {
  p50: number;
  p99: number;
  /** Calls per second with CONCURRENT clients. */
  throughput: number;
}

/**
 * Every target is warmed the same way before it is measured: DynamoDB Local's JVM and V8 both
 * compile hot paths over the first thousands of requests, and a server that has been up for a
 * minute is warm. Measured cold, the same build reads about twice as slow.
 */
const WARM_UP_CALLS = 2_000;
const WARM_UP_CONCURRENCY = 4;
const LATENCY_CALLS = 400;
const THROUGHPUT_CALLS = 1_600;
export const CONCURRENT = 16;

/** Node's fetch keeps connections alive by default; the answer is read and parsed in full. */
async function post(call: HttpCall): Promise<Answer> {
  const response = await fetch(call.url, {
    method: "POST",
    headers: call.headers,
    body: JSON.stringify(call.body),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: `problem` sees the text.
  }
  return { status: response.status, body };
}

/** `total` calls from `concurrency` clients; throws on the first answer that is not a success. */
export async function runPhase(
  target: Target,
  options: { total: number; concurrency: number; runId: string },
): Promise<Phase> {
  const latencies: number[] = [];
  const callIds = Array.from({ length: options.total }, (_, i) => `${options.runId}-c${i}`);
  const started = performance.now();
  await runConcurrently(options.total, options.concurrency, async (i) => {
    const t0 = performance.now();
    const { status, body } = await target.send(options.runId, callIds[i] as string, i);
    latencies.push(performance.now() - t0);
    const problem = target.problem(status, body);
    if (problem !== undefined) {
      throw new Error(
        `${target.name}: call ${i} failed (HTTP ${status}): ${problem}\n${JSON.stringify(body).slice(0, 2_000)}`,
      );
    }
  });
  return { runId: options.runId, latencies, elapsedMs: performance.now() - started, callIds };
}

export function latencyFigures(latencies: readonly number[]): { p50: number; p99: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** Calls a second over phases taken together: all their calls over all their time. */
function throughputOf(phases: readonly Phase[]): number {
  const calls = phases.reduce((sum, phase) => sum + phase.latencies.length, 0);
  const elapsed = phases.reduce((sum, phase) => sum + phase.elapsedMs, 0);
  return (calls / elapsed) * 1000;
}

/** Rounds that targets measured side by side take turns in (measureSideBySide). */
const ROUNDS = 4;
/**
 * Quiet before each measured phase of targets measured side by side: what the phase before
 * left running (a stage's log and stream writes behind its last answers, the JVM's collection
 * after a burst) would otherwise land on the next target's first calls.
 */
const SETTLE_MS = 1_000;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/**
 * Targets that share a store (Toolbus, the floor route on its DynamoDB Local), measured in
 * turns: each warmed with WARM_UP_CALLS from WARM_UP_CONCURRENCY clients, then ROUNDS rounds in which each target in turn
 * makes a quarter of its one-client calls and a quarter of its concurrent ones, after a quiet
 * second, the order turning each round. Measured one after the other, minutes apart, two
 * targets would each meet another state of this shared machine (its speed moves by tens of
 * percent within minutes) and their ratio would say more about the moment than about them.
 * Latencies are pooled over the rounds; throughput is all concurrent calls over their time.
 */
export async function measureSideBySide(
  targets: readonly Target[],
  runIdFor: (target: number, phase: string) => string,
): Promise<Array<Figures & { throughputPhases: Phase[] }>> {
  for (const [t, target] of targets.entries()) {
    await runPhase(target, {
      total: WARM_UP_CALLS,
      concurrency: WARM_UP_CONCURRENCY,
      runId: runIdFor(t, "warm"),
    });
  }
  const latencies = targets.map(() => [] as number[]);
  const phases = targets.map(() => [] as Phase[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (let turn = 0; turn < targets.length; turn++) {
      const t = (round + turn) % targets.length;
      const target = targets[t] as Target;
      await settle();
      const latency = await runPhase(target, {
        total: LATENCY_CALLS / ROUNDS,
        concurrency: 1,
        runId: runIdFor(t, `p${round}`),
      });
      latencies[t]?.push(...latency.latencies);
      await settle();
      phases[t]?.push(
        await runPhase(target, {
          total: THROUGHPUT_CALLS / ROUNDS,
          concurrency: CONCURRENT,
          runId: runIdFor(t, `t${round}`),
        }),
      );
    }
  }
  return targets.map((_, t) => {
    const throughputPhases = phases[t] ?? [];
    return {
      ...latencyFigures(latencies[t] ?? []),
      throughput: throughputOf(throughputPhases),
      throughputPhases,
    };
  });
}

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
};

function mcpToolsCall(index: number, name: string, args: unknown) {
  return { jsonrpc: "2.0", id: index, method: "tools/call", params: { name, arguments: args } };
}

interface McpAnswer {
  result?: { isError?: boolean; content?: unknown[] };
  error?: unknown;
}

/** A tools/call answer that is a result, not a JSON-RPC error nor an isError result. */
export function mcpProblem(status: number, body: unknown): string | undefined {
  if (status !== 200) return "expected HTTP 200";
  const answer = body as McpAnswer;
  if (answer?.error !== undefined) return "JSON-RPC error";
  if (answer?.result === undefined) return "no result";
  if (answer.result.isError) return "isError result";
  if (!answer.result.content?.length) return "no content";
  return undefined;
}

export function bareMcpTarget(origin: string): Target {
  return {
    name: "bare MCP SDK server",
    send: overHttp((_runId, _callId, index) => ({
      url: `${origin}/mcp`,
      headers: MCP_HEADERS,
      body: mcpToolsCall(index, "readability_analyzer", { text: TEXT }),
    })),
    problem: mcpProblem,
  };
}

export function bareHonoTarget(origin: string): Target {
  return {
    name: "bare Hono route",
    send: overHttp(() => ({
      url: `${origin}/call`,
      headers: { "content-type": "application/json" },
      body: { text: TEXT },
    })),
    problem: (status, body) =>
      status === 200 && (body as { status?: string })?.status === "succeeded"
        ? undefined
        : "expected 200 and status succeeded",
  };
}

/** `POST /v1/runs/{runId}/calls`, waiting for the result; unique call ids, so none is a replay. */
export function toolbusRestTarget(
  api: string,
  key: string,
  tool = "readability_analyzer",
  input: (index: number) => unknown = () => ({ text: TEXT }),
): Target {
  return {
    name: `Toolbus REST ${tool}`,
    send: overHttp((runId, callId, index) => ({
      url: `${api}/v1/runs/${runId}/calls`,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: { tool, input: input(index), callId, wait: 20 },
    })),
    problem: (status, body) =>
      status === 200 && (body as { status?: string })?.status === "succeeded"
        ? undefined
        : "expected 200 and status succeeded",
  };
}

/** `POST /mcp` with the member key; the run id travels in X-Toolbus-Run-Id. */
export function toolbusMcpTarget(api: string, key: string): Target {
  return {
    name: "Toolbus MCP",
    send: overHttp((runId, _callId, index) => ({
      url: `${api}/mcp`,
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, "x-toolbus-run-id": runId },
      body: mcpToolsCall(index, "readability_analyzer", { text: TEXT }),
    })),
    problem: mcpProblem,
  };
}

/**
 * The floor route (servers/floor.ts): the same call id and input as Toolbus's REST call, kept
 * with one conditional PutItem and one UpdateItem.
 */
export function floorTarget(origin: string): Target {
  return {
    name: "floor route",
    send: overHttp((runId, callId) => ({
      url: `${origin}/runs/${runId}/calls`,
      headers: { "content-type": "application/json" },
      body: { callId, input: { text: TEXT } },
    })),
    problem: (status, body) =>
      status === 200 && (body as { status?: string })?.status === "succeeded"
        ? undefined
        : "expected 200 and status succeeded",
  };
}
