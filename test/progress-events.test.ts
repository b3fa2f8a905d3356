import { defineTool, parseStageConfig } from "@toolbus/core";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { createHttpClient } from "@toolbus/core/outbound";
import { startUpstream } from "@toolbus/core/testing";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  scheduledDetail,
  type ThrottleClock,
  throttleProgress,
} from "../packages/core/src/app/calls/lifecycle";
import { executeTool } from "../packages/core/src/runtime/execute";
import { createRecorder } from "../packages/core/src/runtime/recorder";
import {
  createDocumentClient,
  DynamoCallStore,
  DynamoEventLog,
} from "../packages/core/src/store/dynamodb";
import { localFunctionName } from "../packages/local/src/runtime/wiring";
import type { CallRecord } from "../packages/wire/src/model/call";
import { succeededResult } from "./support/calls";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";
import { type McpUpstream, type RemoteToolFixture, startMcpUpstream } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// A running call's progress reaches the bus as ToolCallProgress: throttled per call, best
// effort, keyed by its step, never after the call's result, and in the run's log.

/** A clock whose timers run only when the test moves time on. */
function manualClock() {
  let now = 0;
  const timers: { at: number; run: () => void; cancelled: boolean }[] = [];
  const clock: ThrottleClock = {
    now: () => now,
    after(ms, run) {
      const timer = { at: now + ms, run, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.filter((t) => !t.cancelled && t.at <= now)) {
      timer.cancelled = true;
      timer.run();
    }
  };
  return { clock, advance };
}

describe("the progress throttle", () => {
  it("sends the first step at once, keeps the latest within the window, sends it when the window ends", async () => {
    const { clock, advance } = manualClock();
    const sent: number[] = [];
    const throttle = throttleProgress<number>(
      async (step) => {
        sent.push(step);
      },
      { windowMs: 500, clock },
    );
    throttle.report(1);
    throttle.report(2);
    throttle.report(3);
    await Promise.resolve();
    expect(sent).toEqual([1]);
    advance(499);
    await Promise.resolve();
    expect(sent).toEqual([1]);
    advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    // 2 was overtaken by 3 within the window: only the latest goes.
    expect(sent).toEqual([1, 3]);
    // A step after a quiet window goes at once.
    advance(600);
    throttle.report(4);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([1, 3, 4]);
  });

  it("sends the step still kept on close, and nothing after it", async () => {
    const { clock, advance } = manualClock();
    const sent: number[] = [];
    const throttle = throttleProgress<number>(
      async (step) => {
        sent.push(step);
      },
      { windowMs: 500, clock },
    );
    throttle.report(1);
    advance(100);
    throttle.report(2);
    await throttle.close();
    expect(sent).toEqual([1, 2]);
    throttle.report(3);
    advance(1_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([1, 2]);
  });

  it("goes on after a send fails", async () => {
    const { clock, advance } = manualClock();
    const sent: number[] = [];
    const throttle = throttleProgress<number>(
      async (step) => {
        if (step === 1) throw new Error("bus down");
        sent.push(step);
      },
      { windowMs: 500, clock },
    );
    throttle.report(1);
    advance(500);
    throttle.report(2);
    await throttle.close();
    expect(sent).toEqual([2]);
  });
});

/** A built-in-style tool that reports each of its steps, `gapMs` apart. */
function stepper(gapMs: number) {
  return defineTool({
    spec: {
      id: "test_stepper",
      toolset: "test_progress",
      title: "Stepper",
      description: "Works in three steps, reporting each.",
      category: "utility",
      usageHint: "tests",
    },
    input: z.object({ steps: z.number().int().min(1).max(5) }),
    output: z.object({ steps: z.number() }),
    async execute(input, context) {
      for (let step = 1; step <= input.steps; step++) {
        if (step > 1) await new Promise((resolve) => setTimeout(resolve, gapMs));
        context.progress(step, input.steps, `step ${step}`);
      }
      return { output: `${input.steps} steps`, data: { steps: input.steps } };
    },
  });
}

describe("a tool's context", () => {
  const context = {
    callId: "call-1",
    parentRunId: "run-1",
    config: parseStageConfig({}),
    now: () => new Date(),
    http: createHttpClient({
      userAgent: "test",
      allowHosts: [],
      defaultTimeoutMs: 1_000,
      defaultMaxBytes: 1_000,
      networkEnabled: false,
    }),
    secret: () => undefined,
  };

  it("hands the tool's progress to the call's listener", async () => {
    const steps: [number, number | undefined, string | undefined][] = [];
    const outcome = await executeTool(
      stepper(0),
      { steps: 3 },
      {
        ...context,
        progress: (progress, total, message) => steps.push([progress, total, message]),
      },
    );
    expect(outcome.ok).toBe(true);
    expect(steps).toEqual([
      [1, 3, "step 1"],
      [2, 3, "step 2"],
      [3, 3, "step 3"],
    ]);
  });

  it("is safe to report progress where nothing listens", async () => {
    expect((await executeTool(stepper(0), { steps: 2 }, context)).ok).toBe(true);
  });
});

type LoggedEvent = { eventKey: string; detailType: string; detail: Record<string, unknown> };

/** The detail types in log order, and the progress steps' details. */
function shape(events: LoggedEvent[]) {
  return {
    types: events.map((event) => event.detailType),
    progress: events
      .filter((event) => event.detailType === "ToolCallProgress")
      .map((event) => event.detail),
  };
}

/** A remote tool that reports three steps, `gapMs` apart, before it answers. */
const crawl: RemoteToolFixture = {
  tool: {
    name: "crawl",
    description: "Crawls in three steps.",
    inputSchema: { type: "object", properties: {} },
  },
  async run(_args, call) {
    for (let step = 1; step <= 3; step++) {
      if (step > 1) await new Promise((resolve) => setTimeout(resolve, 50));
      await call.progress(step, 3, `page ${step}`);
    }
    return { content: [{ type: "text", text: "crawled 3 pages" }] };
  },
};

describe("progress through the running system", () => {
  let system: TestToolbus;
  let server: McpUpstream;

  beforeAll(async () => {
    server = await startMcpUpstream([crawl]);
    system = await startTestToolbus({
      tools: [...builtinTools, stepper(600)],
      toolsets: [
        ...builtinToolsets,
        { name: "test_progress", description: "Test tools", owner: "tests", kind: "builtin" },
      ],
      config: { outbound: { allowHosts: ["127.0.0.1"] } },
    });
  }, 60_000);

  afterAll(async () => {
    await system?.stop();
    await server?.close();
  });

  /** A waited-for call of the three-step tool, and its run's log once everything settled. */
  async function stepperCall() {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_stepper", input: { steps: 3 }, wait: 10 },
    });
    expect(response.status).toBe(200);
    await system.settle();
    return { runId, events: await system.events(runId) };
  }

  it("logs each step of a built-in tool that reports past the throttle window, before its result", async () => {
    const { runId, events } = await stepperCall();
    const { types, progress } = shape(events);
    expect(types).toEqual([
      "ToolCallScheduled",
      "ToolCallProgress",
      "ToolCallProgress",
      "ToolCallProgress",
      "ToolResultReceived",
    ]);
    expect(progress.map((detail) => [detail.progress, detail.total, detail.message])).toEqual([
      [1, 3, "step 1"],
      [2, 3, "step 2"],
      [3, 3, "step 3"],
    ]);
    const callId = progress[0]?.callId;
    expect(progress[0]).toMatchObject({
      eventKey: `${runId}/${callId}/progress/1`,
      parentRunId: runId,
      toolId: "test_stepper",
      toolset: "test_progress",
    });
    expect(new Set(events.map((event) => event.eventKey)).size).toBe(events.length);
  });

  it("logs a finished call's last steps with its result when the recorder gets them only after", async () => {
    // The recorder's deliveries come late, as EventBridge's may: the call's own append logs its
    // result first, and a step the recorder then gets would be one after the result.
    const recorder = localFunctionName("recorder");
    const { handlers } = system.toolbus;
    system.bus.registerFunction(recorder, async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return handlers.recorder?.(event);
    });
    try {
      const { types, progress } = shape((await stepperCall()).events);
      expect(types.at(0)).toBe("ToolCallScheduled");
      expect(types.at(-1)).toBe("ToolResultReceived");
      // The last step is there, before the result, and no step twice.
      expect(progress.at(-1)?.progress).toBe(3);
      const steps = progress.map((detail) => detail.progress);
      expect(new Set(steps).size).toBe(steps.length);
    } finally {
      system.bus.registerFunction(recorder, (event) => handlers.recorder?.(event));
    }
  });

  it("forwards a registered MCP server's progress notifications: the last step logged, all before the result", async () => {
    const registered = await system.request("/v1/registered-toolsets/crawler", {
      method: "PUT",
      json: {
        kind: "mcp",
        name: "crawler",
        description: "A crawler's MCP server",
        owner: "team-crawl",
        url: server.url,
        defaults: { category: "research", timeoutMs: 5_000 },
      },
    });
    expect(registered.status).toBe(201);
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "crawl", input: {}, wait: 10 },
    });
    expect(response.status).toBe(200);
    await system.settle();
    const { types, progress } = shape(await system.events(runId));
    // The server's answer is read whole (the outbound client buffers it), so its three steps
    // arrive together and the throttle may merge them: the first and the last go out.
    expect(types[0]).toBe("ToolCallScheduled");
    expect(types.at(-1)).toBe("ToolResultReceived");
    expect(types.slice(1, -1).every((type) => type === "ToolCallProgress")).toBe(true);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.at(-1)).toMatchObject({ progress: 3, total: 3, message: "page 3" });
    expect(progress.map((detail) => detail.progress)).toEqual(
      [...progress.map((detail) => detail.progress as number)].sort(),
    );
  });

  it("reports link_validator's links checked so far, ending with all of them", async () => {
    const links = await startUpstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    try {
      const urls = Array.from({ length: 6 }, (_, n) => `${links.origin}/page-${n}`);
      const runId = system.runId();
      const response = await system.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "link_validator", input: { urls }, wait: 10 },
      });
      expect(response.status).toBe(200);
      await system.settle();
      const { types, progress } = shape(await system.events(runId));
      expect(types.at(-1)).toBe("ToolResultReceived");
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress.at(-1)).toMatchObject({
        progress: 6,
        total: 6,
        message: "6 of 6 links checked",
      });
    } finally {
      await links.close();
    }
  });
});

describe("the recorder and progress", () => {
  const client = testDynamoDbClient();
  const documents = createDocumentClient(client);
  let table: TestTable;
  let calls: DynamoCallStore;
  let log: DynamoEventLog;

  beforeAll(async () => {
    table = await createToolbusTestTable(client, "progress");
    calls = new DynamoCallStore({ client: documents, tableName: table.tableName });
    log = new DynamoEventLog({ client: documents, tableName: table.tableName });
  });

  afterAll(async () => {
    await table?.drop();
    client.destroy();
  });

  const envelope = (detailType: string, detail: Record<string, unknown>) => ({
    source: "toolbus",
    "detail-type": detailType,
    time: "2026-01-01T00:00:02Z",
    detail,
  });
  const progressEvent = (call: CallRecord, step: number) =>
    envelope("ToolCallProgress", {
      eventKey: `${call.parentRunId}/${call.callId}/progress/${step}`,
      parentRunId: call.parentRunId,
      callId: call.callId,
      toolId: call.toolId,
      toolset: call.toolset,
      progress: step,
      total: 5,
      reportedAt: `2026-01-01T00:00:0${step}.000Z`,
    });

  async function runningCall(runId: string): Promise<CallRecord> {
    await calls.create({
      parentRunId: runId,
      callId: "call-1",
      toolId: "web_search",
      toolset: "research",
      toolVersion: "1",
      input: { query: "q" },
      inputHash: "h",
      requestedBy: { id: "tester", role: "member" },
      scheduledAt: "2026-01-01T00:00:01.000Z",
      status: "pending",
    });
    const claimed = await calls.claim(runId, "call-1", "2099-01-01T00:00:00.000Z");
    if (!claimed) throw new Error("not claimed");
    return claimed;
  }

  it("logs a running call's steps once each, counting up, after its scheduling and before its result; none after", async () => {
    const runId = "run-progress-log";
    const call = await runningCall(runId);
    const record = createRecorder(() => ({ events: log, calls }));

    // A step that arrives before the call's scheduling brings it.
    await record(progressEvent(call, 2));
    await record(envelope("ToolCallScheduled", scheduledDetail(call)));
    // Redelivered, and overtaken (step 1 arrives after step 2): neither is logged again.
    await record(progressEvent(call, 2));
    await record(progressEvent(call, 1));
    await record(progressEvent(call, 3));
    const result = succeededResult();
    const done = await calls.complete(runId, "call-1", result);
    if (!done) throw new Error("not completed");
    await record(
      envelope("ToolResultReceived", {
        ...result,
        eventKey: `${runId}/call-1/result`,
        parentRunId: runId,
        callId: "call-1",
        toolId: call.toolId,
        toolset: call.toolset,
        resultOmitted: false,
      }),
    );
    // Late: the result is in the log.
    await record(progressEvent(call, 4));

    const { events } = await log.read(runId);
    expect(events.map((event) => [event.detailType, event.detail.progress])).toEqual([
      ["ToolCallScheduled", undefined],
      ["ToolCallProgress", 2],
      ["ToolCallProgress", 3],
      ["ToolResultReceived", undefined],
    ]);
    expect(events[1]?.occurredAt).toBe("2026-01-01T00:00:02.000Z");
  });

  it("refuses a step of a call that has not started, or with a key that is not a step's", async () => {
    const runId = "run-progress-refused";
    await calls.create({
      parentRunId: runId,
      callId: "call-1",
      toolId: "web_search",
      toolset: "research",
      toolVersion: "1",
      input: { query: "q" },
      inputHash: "h",
      requestedBy: { id: "tester", role: "member" },
      scheduledAt: "2026-01-01T00:00:01.000Z",
      status: "pending",
    });
    const pending = await calls.get(runId, "call-1");
    if (!pending) throw new Error("not created");
    const lines: LogRecord[] = [];
    const logger = createLogger({ service: "toolbus", sink: (line) => lines.push(line) });
    const record = createRecorder(() => ({ events: log, calls, log: logger }));
    await record(progressEvent(pending, 1));
    await calls.claim(runId, "call-1", "2099-01-01T00:00:00.000Z");
    await record({
      ...progressEvent(pending, 1),
      detail: { ...progressEvent(pending, 1).detail, eventKey: `${runId}/call-1/result` },
    });
    expect(lines.map((line) => (line as Record<string, unknown>).reason)).toEqual([
      "the call has not started",
      "wrong key",
    ]);
    expect((await log.read(runId)).events).toEqual([]);
  });
});
