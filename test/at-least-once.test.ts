import { defineTool } from "@toolbus/core";
import type { LocalEventBusOptions } from "@toolbus/local/bus";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { countByCall, type RunEventView } from "./support/http-calls";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const CALLS = 100;

/** Executions per callId, counted inside the tool itself. */
const executions = new Map<string, number>();

const counted = defineTool({
  spec: {
    id: "test_counted",
    toolset: "test_delivery",
    title: "Counted",
    description: "Counts its executions per call.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ key: z.string() }),
  output: z.object({ key: z.string() }),
  async execute(input) {
    executions.set(input.key, (executions.get(input.key) ?? 0) + 1);
    // Long enough for duplicate deliveries to overlap with the first one.
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { output: `ran ${input.key}`, data: input };
  },
});

const fixtures = {
  tools: [...builtinTools, counted],
  toolsets: [
    ...builtinToolsets,
    { name: "test_delivery", description: "Test tools", owner: "tests", kind: "builtin" as const },
  ],
};

let system: TestToolbus | undefined;
afterEach(async () => {
  await system?.stop();
  system = undefined;
});

async function runCalls(bus: LocalEventBusOptions): Promise<void> {
  system = await startTestToolbus({ ...fixtures, bus });
  const running = system;
  const runId = running.runId();
  const keys = Array.from({ length: CALLS }, (_, i) => `${runId}-${i}`);

  const responses = await Promise.all(
    keys.map((key) =>
      running.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "test_counted", input: { key }, callId: `call-${key}`, wait: 0 },
      }),
    ),
  );
  expect(
    responses.map((response) => response.status).filter((s) => s !== 202 && s !== 200),
  ).toEqual([]);
  await running.settle();
  expect(running.bus.deadLetters()).toEqual([]);

  // Each tool ran exactly once.
  expect(keys.map((key) => executions.get(key) ?? 0)).toEqual(keys.map(() => 1));

  // Each call finished and has exactly one Scheduled and one Received in its run's log.
  const response = await running.request(`/v1/runs/${runId}/events?limit=1000`);
  expect(response.status).toBe(200);
  const events = ((await response.json()) as { events: RunEventView[] }).events;
  const counts = countByCall(events);
  for (const key of keys) {
    expect(counts.get(`call-${key}`), key).toEqual({ ToolCallScheduled: 1, ToolResultReceived: 1 });
  }
  const results = events.filter((event) => event.detailType === "ToolResultReceived");
  expect(results.every((event) => event.detail.status === "succeeded")).toBe(true);
}

describe("at-least-once delivery", () => {
  it("runs each tool once and logs one result per call when every delivery is tripled", async () => {
    await runCalls({ delivery: { duplicateDeliveries: 2 } });
    expect(system?.bus.deliveryStats().delivered).toBeGreaterThanOrEqual(CALLS * 3);
  }, 150_000);

  it("still runs each tool once when the bus also refuses ~30% of entries on the first attempt", async () => {
    const seen = new Set<string>();
    let refused = 0;
    let index = 0;
    await runCalls({
      delivery: { duplicateDeliveries: 2 },
      refuseEntry(entry) {
        const detail = JSON.parse(entry.Detail ?? "{}") as { eventKey?: string };
        const key = `${entry.DetailType}:${detail.eventKey}`;
        if (seen.has(key)) return undefined;
        seen.add(key);
        if (index++ % 10 >= 3) return undefined;
        refused++;
        return { code: "ThrottlingException", message: "Rate exceeded" };
      },
    });
    // The refusals really happened, and the publisher resent every refused entry.
    expect(refused).toBeGreaterThanOrEqual(CALLS * 0.3);
  }, 150_000);
});
