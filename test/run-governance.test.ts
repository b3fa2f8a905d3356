import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * Per-run budgets and the loop breaker, enforced by the platform: counted atomically in
 * DynamoDB Local, refused calls recorded and announced like any other, policies that may only
 * tighten the stage's. The stage here caps runs at 50 calls; tests tighten it per run.
 */
let system: TestToolbus;
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  system = await startTestToolbus({
    config: {
      runs: { policy: { maxCalls: 50 } },
      outbound: { allowHosts: ["127.0.0.1"] },
    },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await upstream?.close();
});

interface CallView {
  callId: string;
  status: string;
  budget?: { calls?: number; cost?: number; seconds?: number };
  result?: { output: string; failure?: { kind: string; recovery: string; retryable: boolean } };
}

async function call(
  runId: string,
  body: { callId?: string; text?: string; policy?: unknown; tool?: string; input?: unknown },
): Promise<CallView> {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: {
      tool: body.tool ?? "readability_analyzer",
      input: body.input ?? { text: body.text ?? "Short words here." },
      wait: 10,
      ...(body.callId ? { callId: body.callId } : {}),
      ...(body.policy ? { policy: body.policy } : {}),
    },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

async function putPolicy(runId: string, policy: unknown): Promise<Response> {
  return system.request(`/v1/runs/${runId}/policy`, { method: "PUT", json: policy });
}

async function run(runId: string) {
  const response = await system.request(`/v1/runs/${runId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    policy: Record<string, number>;
    runPolicy: Record<string, number> | null;
    stagePolicy: Record<string, number>;
    usage: { calls: number; cost: number; perTool: Record<string, number> };
    remaining: { calls?: number };
    calls: Record<string, number>;
  };
}

describe("run budgets", () => {
  it("runs exactly as many of 32 concurrent calls as the limit allows, and refuses the rest", async () => {
    const runId = system.runId();
    expect((await putPolicy(runId, { maxCalls: 10 })).status).toBe(200);
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, index) => call(runId, { text: `Text number ${index}.` })),
    );
    const ran = results.filter((result) => result.status === "succeeded");
    const refused = results.filter((result) => result.status === "failed");
    expect(ran).toHaveLength(10);
    expect(refused).toHaveLength(22);
    for (const result of refused) {
      expect(result.result?.failure).toMatchObject({
        kind: "budget_exceeded",
        recovery: "finish",
        retryable: false,
      });
      expect(result.budget).toEqual({ calls: 0 });
    }
    // Each call that ran was told what was left after it: 9 down to 0, each once.
    expect(ran.map((result) => result.budget?.calls).sort((a, b) => Number(a) - Number(b))).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    await system.settle();
    const described = await run(runId);
    expect(described.usage.calls).toBe(10);
    expect(described.usage.perTool).toEqual({ readability_analyzer: 10 });
    expect(described.remaining).toEqual({ calls: 0 });
    expect(described.calls).toEqual({ succeeded: 10, failed: 22 });
    expect(described.policy).toEqual({ maxCalls: 10 });
  });

  it("counts a repeated call id once: it is the same call", async () => {
    const runId = system.runId();
    await putPolicy(runId, { maxCalls: 2 });
    const first = await call(runId, { callId: "same" });
    const again = await call(runId, { callId: "same" });
    expect(again).toEqual(first);
    expect((await call(runId, { callId: "second", text: "Other words." })).status).toBe(
      "succeeded",
    );
    const third = await call(runId, { callId: "third", text: "More words." });
    expect(third.result?.failure?.kind).toBe("budget_exceeded");
    // A refused call asked again is still the same refused call, and costs nothing more.
    expect(await call(runId, { callId: "third", text: "More words." })).toEqual(third);
    expect((await run(runId)).usage.calls).toBe(2);
  });

  it("limits calls of one tool, telling the agent to plan without it", async () => {
    const runId = system.runId();
    await putPolicy(runId, { maxCallsPerTool: 1 });
    expect((await call(runId, { text: "One." })).status).toBe("succeeded");
    const refused = await call(runId, { text: "Two." });
    expect(refused.result?.failure).toMatchObject({ kind: "budget_exceeded", recovery: "replan" });
    expect(refused.result?.output).toContain("maxCallsPerTool");
  });

  it("limits cost, by each tool's declared cost", async () => {
    const runId = system.runId();
    // readability_analyzer costs 1 unit (the default); the stage's 50 calls apply too.
    await putPolicy(runId, { maxCost: 2 });
    expect((await call(runId, { text: "One." })).budget).toEqual({ calls: 49, cost: 1 });
    expect((await call(runId, { text: "Two." })).budget).toEqual({ calls: 48, cost: 0 });
    const refused = await call(runId, { text: "Three." });
    expect(refused.result?.failure?.kind).toBe("budget_exceeded");
    expect((await run(runId)).usage.cost).toBe(2);
  });

  it("counts the cost a registered tool declares", async () => {
    const registered = await system.request("/v1/registered-toolsets/priced", {
      method: "PUT",
      json: {
        kind: "http",
        name: "priced",
        description: "A paid API",
        owner: "tests",
        tools: [
          {
            id: "priced_lookup",
            title: "Priced lookup",
            description: "Looks a thing up, at a price.",
            category: "research",
            usageHint: "Use it sparingly: it is paid.",
            url: `${upstream.origin}/lookup/{q}`,
            inputSchema: {
              type: "object",
              properties: { q: { type: "string" } },
              required: ["q"],
            },
            cost: 3,
          },
        ],
      },
    });
    expect(registered.status).toBe(201);
    const runId = system.runId();
    await putPolicy(runId, { maxCost: 5 });
    const first = await call(runId, { tool: "priced_lookup", input: { q: "a" } });
    expect(first).toMatchObject({ status: "succeeded", budget: { cost: 2 } });
    const second = await call(runId, { tool: "priced_lookup", input: { q: "b" } });
    expect(second.result?.failure?.kind).toBe("budget_exceeded");
    // A cheaper tool still fits what is left.
    expect((await call(runId, { text: "Cheap." })).budget).toMatchObject({ cost: 1 });
  });

  it("limits the seconds from a run's first call", async () => {
    const runId = system.runId();
    await putPolicy(runId, { maxSeconds: 1 });
    const first = await call(runId, { text: "Now." });
    expect(first.status).toBe("succeeded");
    expect(first.budget?.seconds).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const late = await call(runId, { text: "Later." });
    expect(late.result?.failure?.kind).toBe("budget_exceeded");
    expect(late.result?.output).toContain("maxSeconds");
  });
});

describe("the loop breaker", () => {
  it("refuses the same tool with the same input past maxRepeats, cached or not, and lets other input run", async () => {
    const runId = system.runId();
    await putPolicy(runId, { maxRepeats: 2 });
    const same = { text: "The same words again." };
    expect((await call(runId, same)).status).toBe("succeeded");
    expect((await call(runId, same)).status).toBe("succeeded");
    const looped = await call(runId, same);
    expect(looped.result?.failure).toMatchObject({ kind: "loop_detected", recovery: "replan" });
    // Key order is not a different input: the canonical input is what repeats.
    const reordered = await call(runId, {
      input: { text: "The same words again." },
    });
    expect(reordered.result?.failure?.kind).toBe("loop_detected");
    expect((await call(runId, { text: "Different words." })).status).toBe("succeeded");
    // Refused calls are not usage.
    expect((await run(runId)).usage.calls).toBe(3);
  });
});

describe("policies", () => {
  it("lets a run only tighten the stage's limits, sets a run's policy once, and shows both", async () => {
    const runId = system.runId();
    const looser = await putPolicy(runId, { maxCalls: 100 });
    expect(looser.status).toBe(400);
    expect(JSON.stringify(await looser.json())).toContain("policy.maxCalls");
    const unknown = await putPolicy(runId, { maxCall: 3 });
    expect(unknown.status).toBe(400);
    const set = await putPolicy(runId, { maxCalls: 3, maxRepeats: 5 });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({
      policy: { maxCalls: 3, maxRepeats: 5 },
      runPolicy: { maxCalls: 3, maxRepeats: 5 },
      stagePolicy: { maxCalls: 50 },
    });
    expect((await putPolicy(runId, { maxCalls: 3, maxRepeats: 5 })).status).toBe(200);
    expect((await putPolicy(runId, { maxCalls: 2 })).status).toBe(409);
    const described = await run(runId);
    expect(described.policy).toEqual({ maxCalls: 3, maxRepeats: 5 });
    expect(described.remaining).toEqual({ calls: 3 });
  });

  it("takes a run's policy from its first call", async () => {
    const runId = system.runId();
    const first = await call(runId, { policy: { maxCalls: 1 } });
    expect(first).toMatchObject({ status: "succeeded", budget: { calls: 0 } });
    expect((await call(runId, { text: "Again." })).result?.failure?.kind).toBe("budget_exceeded");
    // Another policy on a later call is a conflict.
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "x" }, policy: { maxCalls: 5 } },
    });
    expect(response.status).toBe(409);
  });

  it("applies the stage's limits to a run without a policy of its own", async () => {
    const runId = system.runId();
    const described = await run(runId);
    expect(described).toMatchObject({
      policy: { maxCalls: 50 },
      runPolicy: null,
      usage: { calls: 0, cost: 0 },
      remaining: { calls: 50 },
      calls: {},
    });
  });
});

describe("refused calls on the bus", () => {
  it("announces a refused call like any other: both events, the failure and the budget in the run's log", async () => {
    const runId = system.runId();
    await putPolicy(runId, { maxCalls: 1 });
    await call(runId, { callId: "ran" });
    await call(runId, { callId: "refused", text: "No more." });
    await system.settle();
    const events = await system.events<{
      detailType: string;
      detail: { callId: string; failure?: { kind: string }; budget?: unknown };
    }>(runId);
    const refused = events.filter((event) => event.detail.callId === "refused");
    expect(refused.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
    expect(refused[1]?.detail).toMatchObject({
      failure: { kind: "budget_exceeded" },
      budget: { calls: 0 },
    });
    // The refused call never ran: its tool's handler found it finished.
    const view = await system.request(`/v1/runs/${runId}/calls/refused`);
    expect(await view.json()).toMatchObject({ status: "failed", result: { durationMs: 0 } });
  });
});
