import { PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { defineTool, inProcessDispatcher } from "@toolbus/core";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { localEventBridgeClient } from "@toolbus/local/bus";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

interface RunEventView {
  eventKey: string;
  detailType: string;
  detail: Record<string, unknown>;
}

interface CallView {
  callId: string;
  status: string;
  result?: { output: string };
}

const executions = new Map<string, number>();

/** Counts its executions per label, and takes `ms` to answer. */
const counter = defineTool({
  spec: {
    id: "test_direct",
    toolset: "test_fixtures",
    title: "Direct",
    description: "Counts its executions.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ label: z.string(), ms: z.number().int().max(5_000).default(0) }),
  output: z.object({ label: z.string() }),
  async execute(input) {
    executions.set(input.label, (executions.get(input.label) ?? 0) + 1);
    if (input.ms > 0) await new Promise((resolve) => setTimeout(resolve, input.ms));
    return { output: `counted ${input.label}`, data: { label: input.label } };
  },
});

const fixtures = {
  tools: [...builtinTools, counter],
  toolsets: [
    ...builtinToolsets,
    { name: "test_fixtures", description: "Test tools", owner: "tests", kind: "builtin" as const },
  ],
};

async function call(system: TestToolbus, runId: string, body: Record<string, unknown>) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "test_direct", ...body },
  });
  return { status: response.status, body: (await response.json()) as CallView };
}

const ofType = (log: RunEventView[], type: string) => log.filter((e) => e.detailType === type);

describe("a call a caller waits for is dispatched directly to its handler", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    // Every bus delivery duplicated twice: a tool rule that let a direct call through would
    // run it again, three times over.
    system = await startTestToolbus({ ...fixtures, bus: { delivery: { duplicateDeliveries: 2 } } });
  });
  afterAll(() => system.stop());

  it("answers with the result, runs the tool once, and logs both events, the scheduled one marked direct", async () => {
    const runId = system.runId();
    const { status, body } = await call(system, runId, { input: { label: "once" }, wait: 5 });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "succeeded", result: { output: "counted once" } });
    const log = await system.events<RunEventView>(runId);
    expect(executions.get("once")).toBe(1);
    expect(log.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(log[0]?.detail).toMatchObject({ callId: body.callId, dispatch: "direct" });
    expect(system.bus.deadLetters()).toEqual([]);
  });

  it("never runs a directly dispatched call again when its event is later delivered by the bus", async () => {
    const runId = system.runId();
    const { body } = await call(system, runId, { input: { label: "redelivered" }, wait: 5 });
    const [scheduled] = await system.events<RunEventView>(runId);
    // The same announcement without the direct mark, as a fallback would send it: the tool's
    // rule delivers it (three times), and the handler finds the call already finished.
    const { dispatch: _, ...detail } = scheduled?.detail ?? {};
    const client = localEventBridgeClient({ bus: system.bus });
    await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: system.busName,
            Source: "toolbus",
            DetailType: "ToolCallScheduled",
            Detail: JSON.stringify(detail),
          },
        ],
      }),
    );
    client.destroy();
    const log = await system.events<RunEventView>(runId);
    expect(executions.get("redelivered")).toBe(1);
    expect(ofType(log, "ToolResultReceived")).toHaveLength(1);
    expect(ofType(log, "ToolCallScheduled")).toHaveLength(1);
    const stored = await system.request(`/v1/runs/${runId}/calls/${body.callId}`);
    expect(((await stored.json()) as CallView).status).toBe("succeeded");
    expect(system.bus.deadLetters()).toEqual([]);
  });

  it("answers 202 when the wait runs out while the handler runs, and the call still finishes", async () => {
    const runId = system.runId();
    const { status, body } = await call(system, runId, {
      input: { label: "slow", ms: 400 },
      wait: 0.05,
    });
    expect(status).toBe(202);
    expect(body.status).toBe("running");
    await system.settle();
    const stored = await system.request(`/v1/runs/${runId}/calls/${body.callId}`);
    expect(((await stored.json()) as CallView).status).toBe("succeeded");
    expect(executions.get("slow")).toBe(1);
  });

  it("answers a repeated call id during a direct run with the one result, running the tool once", async () => {
    const runId = system.runId();
    const request = { input: { label: "twice", ms: 150 }, callId: "same-call", wait: 5 };
    const [first, second] = await Promise.all([
      call(system, runId, request),
      call(system, runId, request),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.result).toEqual(first.body.result);
    expect(executions.get("twice")).toBe(1);
  });

  it("announces the same fields whichever path runs the call, but for the direct marks", async () => {
    const direct = system.runId();
    const byBus = system.runId();
    await call(system, direct, { input: { label: "shape" }, wait: 5 });
    const accepted = await call(system, byBus, { input: { label: "shape" }, wait: 0 });
    expect(accepted.status).toBe(202);
    const deadline = Date.now() + 5_000;
    let busLog = await system.events<RunEventView>(byBus);
    while (busLog.length < 2 && Date.now() < deadline) busLog = await system.events(byBus);
    const directLog = await system.events<RunEventView>(direct);
    const shape = (event: RunEventView | undefined) =>
      Object.keys(event?.detail ?? {})
        .filter((key) => key !== "dispatch" && key !== "log")
        .sort();
    expect(busLog.map((e) => e.detailType)).toEqual(directLog.map((e) => e.detailType));
    expect(shape(directLog[0])).toEqual(shape(busLog[0]));
    expect(shape(directLog[1])).toEqual(shape(busLog[1]));
    expect(busLog[0]?.detail.dispatch).toBeUndefined();
    // Whoever finishes a call logs its events: the API, both of a direct call's; the bus
    // handler, a bus-run call's result (its scheduling was the recorder's to log).
    expect(directLog.map((e) => e.detail.log)).toEqual(["direct", "direct"]);
    expect(busLog.map((e) => e.detail.log)).toEqual([undefined, "direct"]);
    const comparable = ({ detail }: RunEventView) => ({
      toolId: detail.toolId,
      toolset: detail.toolset,
      implementation: detail.implementation,
      input: detail.input,
      requestedBy: detail.requestedBy,
      mode: detail.mode,
    });
    expect(comparable(directLog[0] as RunEventView)).toEqual(comparable(busLog[0] as RunEventView));
    expect(directLog[1]?.detail).toMatchObject({ status: "succeeded", output: "counted shape" });
    expect(busLog[1]?.detail).toMatchObject({ status: "succeeded", output: "counted shape" });
  });
});

describe("a direct dispatch that cannot start", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    // A dispatcher with no handlers: every dispatch is refused before anything runs, as a
    // throttled or missing function would be on AWS.
    system = await startTestToolbus({ ...fixtures, dispatcher: inProcessDispatcher({}) });
  });
  afterAll(() => system.stop());

  it("leaves the call to the bus: it still finishes, once, with one of each event in the log", async () => {
    const runId = system.runId();
    const { status, body } = await call(system, runId, { input: { label: "fallback" }, wait: 5 });
    expect(status).toBe(200);
    expect(body.status).toBe("succeeded");
    const log = await system.events<RunEventView>(runId);
    expect(executions.get("fallback")).toBe(1);
    expect(ofType(log, "ToolCallScheduled")).toHaveLength(1);
    expect(ofType(log, "ToolResultReceived")).toHaveLength(1);
    expect(system.bus.deadLetters()).toEqual([]);
  });
});

describe("a direct dispatch while the bus refuses every event", () => {
  let system: TestToolbus;
  const errors: LogRecord[] = [];
  beforeAll(async () => {
    system = await startTestToolbus({
      ...fixtures,
      bus: { refuseEntry: () => ({ code: "InternalFailure", message: "down" }) },
      log: createLogger({
        service: "toolbus",
        sink: (line) => {
          if (line.level === "ERROR") errors.push(line);
        },
      }),
    });
  });
  afterAll(() => system.stop());

  it("still answers with the stored result, and leaves it marked unannounced for a redelivery", async () => {
    {
      const runId = system.runId();
      // Slower than the announcement's grace and than the publisher's retries: the scheduled
      // event is sent on its own and fails while nobody awaits it yet.
      const { status, body } = await call(system, runId, {
        input: { label: "bus-down", ms: 800 },
        wait: 5,
      });
      expect(status).toBe(200);
      expect(body.status).toBe("succeeded");
      await system.toolbus.settled();
      const stored = await system.toolbus.calls.get(runId, body.callId);
      expect(stored?.status).toBe("succeeded");
      expect(stored?.resultPublishedAt).toBeUndefined();
      // The result's announcement, made after the answer here, failed, and that was logged as
      // an error (not lost with nobody awaiting it); the sweeper announces the call again.
      const until = Date.now() + 5_000;
      while (errors.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(errors).toHaveLength(1);
      expect(errors[0]?.message).toContain("could not be announced");
      expect(JSON.stringify(errors)).toContain("PublishError");
    }
  });
});
