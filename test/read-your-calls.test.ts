import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localFunctionName } from "../packages/local/src/runtime/wiring";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * Read your own calls: whoever finishes a call (the API, a tool's handler) writes its events
 * to its run's log. On AWS that is before the caller has the answer; under `npm start` (one
 * process that outlives its answers) the answer goes first and the events right after, and
 * the process's reads of the run wait for them. Either way a GET of the run's events straight
 * after a synchronous call's answer, with no settle and no drain in between, shows both, as
 * README.md's five-minute tour does with curl (steps 4 and 6: the call, then the run's events).
 */

interface EventsPage {
  events: Array<{ detailType: string; detail: { callId: string } }>;
}

const TEXT = "Toolbus gives agents tools. They use them when it helps.";

/** GET /v1/runs/{runId}/events as a caller makes it: nothing awaited before it. */
async function eventsNow(system: TestToolbus, runId: string): Promise<EventsPage["events"]> {
  const response = await system.request(`/v1/runs/${runId}/events`);
  expect(response.status).toBe(200);
  return ((await response.json()) as EventsPage).events;
}

async function restCall(system: TestToolbus, runId: string, body: Record<string, unknown> = {}) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: TEXT }, wait: 10, ...body },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { callId: string; status: string };
}

describe("a synchronous call under the local composition", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await startTestToolbus();
  });
  afterAll(() => system.stop());

  it("is in its run's log when it answers: Scheduled, then Received", async () => {
    for (let i = 0; i < 5; i++) {
      const runId = system.runId();
      const call = await restCall(system, runId, { callId: `c${i}` });
      expect(call.status).toBe("succeeded");
      const events = await eventsNow(system, runId);
      expect(events.map((e) => [e.detailType, e.detail.callId])).toEqual([
        ["ToolCallScheduled", call.callId],
        ["ToolResultReceived", call.callId],
      ]);
    }
  });

  it("is, called through MCP too", async () => {
    const runId = system.runId();
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "x-toolbus-run-id": runId },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "readability_analyzer", arguments: { text: TEXT } },
      },
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { result: { isError?: boolean } };
    expect(answer.result.isError).toBeFalsy();
    expect((await eventsNow(system, runId)).map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("is, when its run's policy refuses it", async () => {
    const runId = system.runId();
    await restCall(system, runId, { policy: { maxCalls: 1 } });
    const refused = await restCall(system, runId);
    expect(refused.status).toBe("failed");
    const events = await eventsNow(system, runId);
    expect(
      events.filter((e) => e.detail.callId === refused.callId).map((e) => e.detailType),
    ).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });

  it("is, when the same call is made again", async () => {
    const runId = system.runId();
    const first = await restCall(system, runId, { callId: "again" });
    const second = await restCall(system, runId, { callId: "again" });
    expect(second.callId).toBe(first.callId);
    expect((await eventsNow(system, runId)).map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });
});

describe("a synchronous call while the recorder is down", () => {
  let system: TestToolbus;
  const lines: LogRecord[] = [];
  beforeAll(async () => {
    system = await startTestToolbus({
      log: createLogger({ service: "toolbus", sink: (line) => lines.push(line) }),
    });
  });
  afterAll(() => system.stop());

  it("is in its run's log when it answers: the recorder is not even asked", async () => {
    const recorder = localFunctionName("recorder");
    let asked = 0;
    system.bus.registerFunction(recorder, () => {
      asked++;
      throw new Error("the recorder is down");
    });
    const runId = system.runId();
    const call = await restCall(system, runId);
    expect(call.status).toBe("succeeded");
    const events = await eventsNow(system, runId);
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(events.map((e) => (e.detail as { log?: string }).log)).toEqual(["direct", "direct"]);
    // The bus held nothing back for it: its rule skips events their announcer logged.
    await system.settle();
    expect(asked).toBe(0);
    expect(lines.filter((line) => line.level === "WARN")).toEqual([]);
  });
});

describe("a synchronous call whose announcement is held up", () => {
  let system: TestToolbus;
  let release: () => void = () => {};
  let held = Promise.resolve();
  /** Held: only this call's announcements; undefined, every one. */
  let heldCall: string | undefined;
  beforeAll(async () => {
    system = await startTestToolbus();
    // Every PutEvents waits for the gate (the bus is slow, not down), or only one call's.
    system.eventBridge.middlewareStack.add(
      (next) => async (args) => {
        const entries = JSON.stringify((args.input as { Entries?: unknown }).Entries ?? []);
        if (heldCall === undefined || entries.includes(heldCall)) await held;
        return next(args);
      },
      { step: "initialize", name: "holdPutEvents" },
    );
  });
  afterAll(async () => {
    release();
    await system.stop();
  });

  it("is answered at once, and a read of its run waits for its events instead of missing them", async () => {
    held = new Promise((resolve) => {
      release = resolve;
    });
    const runId = system.runId();
    // Answered while its announcement cannot leave: the answer waits for its two writes only.
    const call = await restCall(system, runId, { wait: 2 });
    expect(call.status).toBe("succeeded");
    const read = eventsNow(system, runId);
    const early = await Promise.race([
      read.then(() => "read"),
      new Promise((resolve) => setTimeout(resolve, 200, "still waiting")),
    ]);
    expect(early).toBe("still waiting");
    release();
    expect((await read).map((e) => [e.detailType, e.detail.callId])).toEqual([
      ["ToolCallScheduled", call.callId],
      ["ToolResultReceived", call.callId],
    ]);
  });

  it("does not hold a read of its run for as long as the bus does", async () => {
    held = new Promise((resolve) => {
      release = resolve;
    });
    const runId = system.runId();
    const call = await restCall(system, runId, { wait: 2 });
    expect(call.status).toBe("succeeded");
    // The bus never answers while this read waits: it gives up waiting and reads what is there.
    expect(await eventsNow(system, runId)).toEqual([]);
    release();
    await system.settle();
    expect((await eventsNow(system, runId)).map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("logs a run's calls in the order they were answered, though the first one's bus is slower", async () => {
    held = new Promise((resolve) => {
      release = resolve;
    });
    const runId = system.runId();
    heldCall = `${runId}-first`;
    try {
      const first = await restCall(system, runId, { wait: 2, callId: `${runId}-first` });
      const second = await restCall(system, runId, { wait: 2, callId: `${runId}-second` });
      expect([first.status, second.status]).toEqual(["succeeded", "succeeded"]);
      // The second call's bus is not held: only the run's order keeps it after the first.
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await system.settle();
    } finally {
      heldCall = undefined;
    }
    expect((await eventsNow(system, runId)).map((e) => [e.detailType, e.detail.callId])).toEqual([
      ["ToolCallScheduled", `${runId}-first`],
      ["ToolResultReceived", `${runId}-first`],
      ["ToolCallScheduled", `${runId}-second`],
      ["ToolResultReceived", `${runId}-second`],
    ]);
  });
});
