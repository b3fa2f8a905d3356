import { runCli } from "@toolbus/client/cli";
import { createLogger, InProcessMetrics, type LogRecord } from "@toolbus/core/observability";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * GET /v1/metrics, admin only: under `npm start` (where one process runs every handler) the
 * counters and latency percentiles of the calls it ran; on AWS, where each tool's function
 * writes its own, where CloudWatch keeps them.
 */
const lines: LogRecord[] = [];
const awsLines: LogRecord[] = [];
let local: TestToolbus;
let aws: TestToolbus;

beforeAll(async () => {
  [local, aws] = await Promise.all([
    startTestToolbus({
      metrics: new InProcessMetrics(),
      log: createLogger({ service: "toolbus", sink: (line) => lines.push(line) }),
    }),
    startTestToolbus({
      config: { stage: "metrics-aws", observability: { logInputs: true } },
      log: createLogger({ service: "toolbus", sink: (line) => awsLines.push(line) }),
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([local?.stop(), aws?.stop()]);
});

async function memberKey(system: TestToolbus): Promise<string> {
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "member", role: "member" },
  });
  return ((await response.json()) as { key: string }).key;
}

describe("GET /v1/metrics", () => {
  it("counts the calls this process ran, by tool and outcome, with latency percentiles", async () => {
    const runId = local.runId();
    for (const [callId, input] of [
      ["ok", { text: "The cat sat on the mat." }],
      ["bad", { text: 42 }],
    ] as const) {
      await local.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "readability_analyzer", input, callId, wait: 10 },
      });
    }
    const response = await local.request("/v1/metrics");
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      source: string;
      counters: Array<{ name: string; dimensions: Record<string, string>; value: number }>;
      latencies: Array<{ name: string; count: number; p50: number; p99: number }>;
    };
    expect(body.source).toBe("process");
    const byTool = { toolId: "readability_analyzer" };
    // The invalid input is refused before it is recorded: only the valid call ran.
    expect(body.counters).toContainEqual({ name: "calls", dimensions: byTool, value: 1 });
    expect(body.counters).toContainEqual({ name: "succeeded", dimensions: byTool, value: 1 });
    expect(body.latencies).toEqual([
      expect.objectContaining({ name: "duration", dimensions: byTool, count: 1 }),
    ]);
  });

  it("logs a waited-for call in one line, finished, under its trace", async () => {
    const runId = local.runId();
    await local.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: {
        tool: "readability_analyzer",
        input: { text: "Hi there." },
        callId: "steps",
        wait: 10,
      },
      headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    const steps = lines.filter((line) => line.parentRunId === runId);
    expect(steps.map((line) => [line.message, line.step, line.dispatch])).toEqual([
      ["call finished", undefined, "direct"],
    ]);
    for (const line of steps) {
      expect(line).toMatchObject({
        callId: "steps",
        toolId: "readability_analyzer",
        principal: "admin-bootstrap",
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      });
    }
  });

  it("logs a call nobody waits for as accepted for the bus, and its handler's line closes it", async () => {
    const runId = local.runId();
    const response = await local.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "Later." }, callId: "bus", wait: 0 },
    });
    expect(response.status).toBe(202);
    await expect
      .poll(
        () =>
          lines
            .filter((line) => line.parentRunId === runId)
            .map((line) => [line.message, line.step]),
        { timeout: 10_000 },
      )
      .toEqual([
        ["call accepted", "accepted"],
        ["call finished", undefined],
      ]);
    const steps = lines.filter((line) => line.parentRunId === runId);
    expect(steps.map((line) => line.dispatch)).toEqual(["bus", "bus"]);
    expect(steps[1]).toMatchObject({ outcome: "succeeded", callId: "bus" });
  });

  it("never logs a call's input unless the stage opts in, and then only on the accepted line", async () => {
    const text = "Secret-ish words. ".repeat(400);
    for (const system of [local, aws]) {
      await system.request(`/v1/runs/${system.runId()}/calls`, {
        method: "POST",
        json: { tool: "readability_analyzer", input: { text }, callId: "input", wait: 10 },
      });
    }
    const withInput = (all: LogRecord[]) =>
      all.filter((line) => line.callId === "input" && line.input !== undefined);
    expect(withInput(lines)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain("Secret-ish");
    const logged = withInput(awsLines);
    expect(logged.map((line) => line.step)).toEqual(["accepted"]);
    const input = String(logged[0]?.input);
    // Cut to a bounded length, and says how long the whole input was.
    expect(input.startsWith(`{"text":"Secret-ish words.`)).toBe(true);
    expect(input.length).toBeLessThan(4200);
    expect(input).toContain(`(${JSON.stringify({ text }).length} chars)`);
  });

  it("is for admins only", async () => {
    const response = await local.request("/v1/metrics", { key: await memberKey(local) });
    expect(response.status).toBe(403);
  });

  it("says where the metrics are when no process holds them all", async () => {
    const response = await aws.request("/v1/metrics");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      source: "cloudwatch",
      cloudwatch: { namespace: "Toolbus", dimensions: { stage: "metrics-aws" } },
    });
  });
});

describe("toolbus stats", () => {
  async function stats(system: TestToolbus, ...flags: string[]) {
    const server: ApiServer = await serveApi(system.app, { port: 0 });
    let stdout = "";
    try {
      const code = await runCli(["stats", ...flags, "--endpoint", server.url], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => undefined },
        stdin: (async function* () {})(),
        env: { TOOLBUS_API_KEY: system.adminKey },
        cwd: process.cwd(),
      });
      expect(code).toBe(0);
      return stdout;
    } finally {
      await server.close();
    }
  }

  it("shows each tool's counters and latency as the server counted them", async () => {
    await local.request(`/v1/runs/${local.runId()}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "Count me." }, wait: 10 },
    });
    const counted = (await (await local.request("/v1/metrics")).json()) as {
      counters: Array<{ name: string; dimensions: Record<string, string>; value: number }>;
    };
    const calls = counted.counters.find(
      (c) => c.name === "calls" && c.dimensions.toolId === "readability_analyzer",
    )?.value;
    expect(calls).toBeGreaterThan(0);
    const text = await stats(local);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^Calls this server ran since \d{4}-/);
    expect(lines).toContainEqual(expect.stringMatching(/^TOOL\s+CALLS\s+OK\s+FAILED\s+CACHE HIT/));
    const row = lines.find((line) => line.startsWith("readability_analyzer "))?.split(/\s+/);
    // calls, ok, failed, then cache and the rest; p50 and p99 last.
    expect(row?.slice(1, 4)).toEqual([String(calls), String(calls), "0"]);
    expect(Number(row?.at(-1))).toBeGreaterThanOrEqual(Number(row?.at(-2)));
    expect(JSON.parse(await stats(local, "--json"))).toMatchObject({ source: "process" });
  });

  it("says where the metrics are when the server does not count them", async () => {
    expect(await stats(aws)).toBe(
      [
        "Each tool's function counts its own calls: the metrics are in CloudWatch,",
        "namespace Toolbus (stage=metrics-aws).",
        "The stage's dashboard is toolbus-metrics-aws.",
        "",
      ].join("\n"),
    );
  });
});
