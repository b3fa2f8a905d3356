import { createSweeper } from "@toolbus/core";
import type { CallRecord } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

function pendingCall(runId: string, callId: string): CallRecord {
  return {
    parentRunId: runId,
    callId,
    toolId: "readability_analyzer",
    toolset: "text_analysis",
    toolVersion: "1",
    input: { text: "Stuck." },
    inputHash: "h",
    status: "pending",
    requestedBy: { id: "tester", role: "member" },
    scheduledAt: new Date(Date.now() - 120_000).toISOString(),
  };
}

describe("the sweeper", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await startTestToolbus();
  });
  afterAll(() => system.stop());

  const sweep = () =>
    createSweeper(() => ({
      calls: system.toolbus.stores.calls,
      bus: system.toolbus.publisher,
    }))();
  const sweepAt = (at: number) =>
    createSweeper(() => ({
      calls: system.toolbus.stores.calls,
      bus: system.toolbus.publisher,
      now: () => new Date(at),
    }))();

  it("fails a call stuck in RUNNING past its deadline as a timeout, and announces it", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    await calls.create(pendingCall(runId, "stuck-1"));
    // A handler claimed it and died: the deadline has passed, nothing will finish it.
    await calls.claim(runId, "stuck-1", new Date(Date.now() - 1_000).toISOString());

    const { swept } = await sweep();
    expect(swept).toBeGreaterThanOrEqual(1);

    const view = await system.request(`/v1/runs/${runId}/calls/stuck-1`);
    expect(await view.json()).toMatchObject({
      status: "failed",
      result: { failure: { kind: "timeout", retryable: true, recovery: "replan" } },
    });
    await system.settle();
    const events = (await (await system.request(`/v1/runs/${runId}/events`)).json()) as {
      events: Array<{ detailType: string; detail: { callId: string } }>;
    };
    // Its first announcement may have died with its handler: the log gets both events.
    expect(events.events.map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("fails only the run it read: a call claimed again since then is left to its new handler", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    // Handed straight to its handler, which has not started it by its deadline.
    await calls.create({ ...pendingCall(runId, "claimed-again"), dispatch: "direct" });
    await calls.claim(runId, "claimed-again", new Date(Date.now() - 1_000).toISOString());
    const fresh = new Date(Date.now() + 60_000).toISOString();
    // Between the sweeper's read and its write, the dispatcher lets it go and a handler
    // claims it again, with a deadline a minute away.
    const listStuck: typeof calls.listStuck = async (before, limit) => {
      const stuck = await calls.listStuck(before, limit);
      if (stuck.some((call) => call.callId === "claimed-again")) {
        expect(await calls.release(runId, "claimed-again")).toBe(true);
        expect(await calls.claim(runId, "claimed-again", fresh)).toBeDefined();
      }
      return stuck;
    };
    // The real store, its stuck list read as above.
    const racing = new Proxy(calls, {
      get(target, name) {
        if (name === "listStuck") return listStuck;
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await createSweeper(() => ({ calls: racing, bus: system.toolbus.publisher }))();
    expect(await calls.get(runId, "claimed-again")).toMatchObject({
      status: "running",
      deadlineAt: fresh,
    });
  });

  it("leaves running calls within their deadline, and finished calls, alone", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    await calls.create(pendingCall(runId, "alive"));
    await calls.claim(runId, "alive", new Date(Date.now() + 60_000).toISOString());
    const done = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "Done." }, callId: "done", wait: 10 },
    });
    expect(done.status).toBe(200);

    await sweep();
    expect((await calls.get(runId, "alive"))?.status).toBe("running");
    expect((await calls.get(runId, "done"))?.status).toBe("succeeded");
  });

  const kinds = async (runId: string) => {
    await system.settle();
    const page = (await (await system.request(`/v1/runs/${runId}/events`)).json()) as {
      events: Array<{ detailType: string }>;
    };
    return page.events.map((event) => event.detailType);
  };

  it("announces a call left pending (its announcement lost) again, and its handler runs it", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    // Recorded two minutes ago; the process died before ToolCallScheduled left.
    await calls.create(pendingCall(runId, "lost-announcement"));
    const { announced } = await sweep();
    expect(announced).toBeGreaterThanOrEqual(1);
    expect(await kinds(runId)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect((await calls.get(runId, "lost-announcement"))?.status).toBe("succeeded");
  });

  it("fails a call no handler took within the give-up age as unavailable, and announces it", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    await calls.create(pendingCall(runId, "never-taken"));
    await createSweeper(() => ({
      calls,
      bus: system.toolbus.publisher,
      giveUpAfterMs: 60_000,
    }))();
    expect(await calls.get(runId, "never-taken")).toMatchObject({
      status: "failed",
      result: { failure: { kind: "unavailable" } },
    });
    expect(await kinds(runId)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });

  it("counts an approved call's wait from its approval, not from when it was made", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    const madeAt = Date.now() - 3 * 60 * 60_000;
    await calls.create({
      ...pendingCall(runId, "approved-late"),
      status: "awaiting_approval",
      scheduledAt: new Date(madeAt).toISOString(),
      approval: {
        requestedAt: new Date(madeAt).toISOString(),
        expiresAt: new Date(Date.now() + 60 * 60_000).toISOString(),
      },
    });
    // Approved three hours after it was made; then its announcement is lost.
    await calls.decide(runId, "approved-late", { approved: true, at: new Date().toISOString() });
    // Two minutes on: past the announce-again grace, well inside the give-up age.
    const later = new Date(Date.now() + 2 * 60_000);
    await createSweeper(() => ({
      calls,
      bus: system.toolbus.publisher,
      now: () => later,
      giveUpAfterMs: 15 * 60_000,
    }))();
    // Announced again, so its handler runs it; never failed as never taken.
    const after = await calls.get(runId, "approved-late");
    expect(after?.result?.failure?.kind).not.toBe("unavailable");
    expect(await kinds(runId)).toContain("ToolCallScheduled");
  });

  it("leaves a call pending for less than the grace alone", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    await calls.create({ ...pendingCall(runId, "fresh"), scheduledAt: new Date().toISOString() });
    await sweep();
    expect((await calls.get(runId, "fresh"))?.status).toBe("pending");
    expect(await kinds(runId)).toEqual([]);
  });

  it("announces a result that was stored but never announced, once, and keeps it", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    await calls.create(pendingCall(runId, "stored-not-announced"));
    // The handler stored its result, then the process died before PutEvents; the call is
    // found where it ran on the index, once its deadline has passed.
    await calls.claim(runId, "stored-not-announced", new Date(Date.now() + 60_000).toISOString());
    await calls.complete(runId, "stored-not-announced", {
      status: "succeeded",
      output: "Grade 3.",
      data: { grade: 3 },
      citations: [],
      cached: false,
      stale: false,
      durationMs: 1,
      resultBytes: 10,
      truncated: false,
      completedAt: new Date(Date.now() - 90_000).toISOString(),
    });
    // Within its deadline it is left to its handler.
    await sweepAt(Date.now());
    expect(await kinds(runId)).toEqual([]);
    const first = await sweepAt(Date.now() + 61_000);
    expect(first.announced).toBeGreaterThanOrEqual(1);
    expect(await kinds(runId)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    const stored = await calls.get(runId, "stored-not-announced");
    expect(stored?.resultPublishedAt).toBeDefined();
    // Announced as it finished, not failed as stuck.
    expect(stored?.status).toBe("succeeded");
    // Marked: off the index, so a second sweep leaves it alone.
    const stuck = await calls.listStuck(new Date(Date.now() + 61_000).toISOString(), 1000);
    expect(stuck.map((call) => call.callId)).not.toContain("stored-not-announced");
  });
});
