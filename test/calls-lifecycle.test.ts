import { defineTool } from "@toolbus/core";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

interface RunEventView {
  eventKey: string;
  detailType: string;
  detail: Record<string, unknown>;
}

let executions = 0;

/** Test-only tools: real code, so the whole path runs, with behaviour tests need. */
const counter = defineTool({
  spec: {
    id: "test_counter",
    toolset: "test_fixtures",
    title: "Counter",
    description: "Counts its executions.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ label: z.string() }),
  output: z.object({ label: z.string() }),
  async execute(input) {
    executions++;
    return { output: `counted ${input.label}`, data: input };
  },
});

const huge = defineTool({
  spec: {
    id: "test_huge",
    toolset: "test_fixtures",
    title: "Huge",
    description: "Returns a result too large for one event.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ kb: z.number().int().max(350) }),
  output: z.object({ blob: z.string() }),
  async execute(input) {
    const blob = "x".repeat(input.kb * 1024);
    return { output: `blob of ${input.kb} KB`, data: { blob } };
  },
});

const fixtures = {
  tools: [...builtinTools, counter, huge],
  toolsets: [
    ...builtinToolsets,
    { name: "test_fixtures", description: "Test tools", owner: "tests", kind: "builtin" as const },
  ],
};

describe("a tool call through the whole path", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await startTestToolbus({ ...fixtures, bus: { delivery: { duplicateDeliveries: 1 } } });
  });
  afterAll(() => system.stop());

  it("returns the finished result with wait, and logs Scheduled then Received under the run", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "The cat sat on the mat." }, wait: 10 },
    });
    expect(response.status).toBe(200);
    const call = (await response.json()) as {
      callId: string;
      status: string;
      result: { data: { words: number; sentences: number } };
    };
    expect(call.status).toBe("succeeded");
    expect(call.result.data).toMatchObject({ words: 6, sentences: 1 });

    const log = await system.events<RunEventView>(runId);
    expect(log.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    for (const event of log) {
      expect(event.detail).toMatchObject({ parentRunId: runId, callId: call.callId });
    }
  });

  it("answers a repeated call id with the same result and no new events", async () => {
    const runId = system.runId();
    const body = { tool: "test_counter", input: { label: "once" }, callId: "call-1", wait: 10 };
    const first = await system.request(`/v1/runs/${runId}/calls`, { method: "POST", json: body });
    const before = executions;
    const again = await system.request(`/v1/runs/${runId}/calls`, { method: "POST", json: body });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
    expect(executions).toBe(before);
    expect(await system.events<RunEventView>(runId)).toHaveLength(2);
  });

  it("runs a tool once and logs one result when every bus delivery is duplicated", async () => {
    const runId = system.runId();
    const before = executions;
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_counter", input: { label: "dup" }, wait: 10 },
    });
    expect(response.status).toBe(200);
    await system.settle();
    expect(executions - before).toBe(1);
    const log = await system.events<RunEventView>(runId);
    expect(log.filter((e) => e.detailType === "ToolResultReceived")).toHaveLength(1);
    expect(system.bus.deadLetters()).toEqual([]);
  });

  it("announces an oversize result with a preview and keeps the full result on the call", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_huge", input: { kb: 260 }, wait: 10 },
    });
    expect(response.status).toBe(200);
    const call = (await response.json()) as { callId: string; result: { data: unknown } };
    const [, received] = await system.events<RunEventView>(runId);
    expect(received?.detail).toMatchObject({
      resultOmitted: true,
      data: null,
      callId: call.callId,
    });

    const stored = await system.request(`/v1/runs/${runId}/calls/${call.callId}`);
    const full = (await stored.json()) as {
      result: { data: { blob: string } | null; truncated: boolean };
    };
    expect(full.result.data?.blob).toHaveLength(260 * 1024);
    expect(full.result.truncated).toBe(false);
  });

  it("stores a result beyond DynamoDB's item size truncated, and says so", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_huge", input: { kb: 340 }, wait: 10 },
    });
    const call = (await response.json()) as {
      status: string;
      result: { data: unknown; truncated: boolean; resultBytes: number };
    };
    expect(call.status).toBe("succeeded");
    expect(call.result).toMatchObject({ data: null, truncated: true });
    expect(call.result.resultBytes).toBeGreaterThan(340 * 1024);
  });

  it("answers 202 with a status URL when asked not to wait, and the call finishes later", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_counter", input: { label: "async" }, wait: 0 },
    });
    expect(response.status).toBe(202);
    const accepted = (await response.json()) as { callId: string; statusUrl: string };
    expect(response.headers.get("location")).toBe(accepted.statusUrl);
    await system.settle();
    const done = await system.request(accepted.statusUrl);
    expect(await done.json()).toMatchObject({ status: "succeeded" });
  });

  it("names each unknown input field by its own path and schedules nothing", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "Fine.", colour: 1, size: 2 } },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { details: Array<{ path: string }> } };
    expect(body.error.details.map((d) => d.path).sort()).toEqual(["colour", "size"]);
    expect(await system.events<RunEventView>(runId)).toEqual([]);
  });

  it("follows a run's events live over text/event-stream", async () => {
    const runId = system.runId();
    const controller = new AbortController();
    const stream = await system.request(`/v1/runs/${runId}/events`, {
      headers: { accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();

    await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_counter", input: { label: "live" }, wait: 0 },
    });
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes("event: ToolResultReceived")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(text.indexOf("event: ToolCallScheduled")).toBeGreaterThanOrEqual(0);
    expect(text.indexOf("event: ToolCallScheduled")).toBeLessThan(
      text.indexOf("event: ToolResultReceived"),
    );
  });
});
