import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { defineTool } from "@toolbus/core";
import { DynamoCallStore } from "@toolbus/core/store/dynamodb";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { testDynamoDbClient } from "./support/dynamodb";
import { type McpUpstream, startMcpUpstream } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * Cancelling a call over REST: a running tool is stopped through its abort signal and the call
 * ends `cancelled`, announced like any other result; a call not started yet fails at once; a
 * finished call stays finished. A cancel written to the call record by another process (here a
 * second store on the same table, which this process's registry of running calls never sees)
 * reaches the handler through the record, as on AWS where the tool runs in another function.
 */

/** Tools' abort signals as they saw them, by call id. */
const aborted = new Map<string, unknown>();
/** Resolves a waiting call of `test_gate` by call id: how a test makes a call finish first. */
const gates = new Map<string, () => void>();

/** Sleeps until cancelled (or until `ms`), reporting progress once a tick. */
const sleeper = defineTool({
  spec: {
    id: "test_sleeper",
    toolset: "test_cancel",
    title: "Sleeper",
    description: "Waits, reporting how long it has waited.",
    category: "utility",
    usageHint: "tests",
    timeoutMs: 60_000,
  },
  input: z.object({ ms: z.number().int().min(0).max(60_000) }),
  output: z.object({ slept: z.number() }),
  async execute(input, context) {
    const started = Date.now();
    while (Date.now() - started < input.ms) {
      if (context.signal.aborted) {
        aborted.set(context.callId, context.signal.reason);
        throw context.signal.reason;
      }
      context.progress(Date.now() - started, input.ms, "sleeping");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { output: "slept", data: { slept: input.ms } };
  },
});

/** Finishes when the test opens its gate, whatever cancel comes meanwhile. */
const gate = defineTool({
  spec: {
    id: "test_gate",
    toolset: "test_cancel",
    title: "Gate",
    description: "Finishes when told.",
    category: "utility",
    usageHint: "tests",
    timeoutMs: 60_000,
  },
  input: z.object({}),
  output: z.object({ opened: z.boolean() }),
  async execute(_input, context) {
    await new Promise<void>((resolve) => gates.set(context.callId, resolve));
    return { output: "opened", data: { opened: true } };
  },
});

let system: TestToolbus;
let otherKey: string;
let upstream: McpUpstream;
/** When the upstream's own request was cancelled (its signal aborted). */
let upstreamCancelled: Date | undefined;

beforeAll(async () => {
  upstream = await startMcpUpstream([
    {
      tool: { name: "crawl_site", description: "Crawls a site.", inputSchema: { type: "object" } },
      run: (_args, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            upstreamCancelled = new Date();
            resolve({ content: [{ type: "text", text: "stopped" }] });
          });
        }),
    },
  ]);
  system = await startTestToolbus({
    tools: [...builtinTools, sleeper, gate],
    toolsets: [
      ...builtinToolsets,
      { name: "test_cancel", description: "Test tools", owner: "tests", kind: "builtin" },
    ],
    config: {
      approvals: { rules: [{ tools: ["test_gate"] }] },
      outbound: { allowHosts: ["127.0.0.1"] },
    },
  });
  const registered = await system.request("/v1/registered-toolsets/crawler", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "crawler",
      description: "A crawler",
      owner: "team-crawl",
      url: upstream.url,
      defaults: { timeoutMs: 30_000, availability: {} },
    },
  });
  expect(registered.status).toBe(201);
  const created = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "someone-else", role: "member" },
  });
  otherKey = ((await created.json()) as { key: string }).key;
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await upstream?.close();
});

interface CallView {
  status: string;
  cancelRequestedAt?: string;
  progress?: { progress: number; total?: number; message?: string };
  result?: { failure?: { kind: string; retryable: boolean; recovery: string } };
}

async function start(runId: string, callId: string, tool: string, input: unknown) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool, input, callId, wait: 0 },
  });
  expect([200, 202]).toContain(response.status);
}

async function read(runId: string, callId: string): Promise<CallView> {
  const response = await system.request(`/v1/runs/${runId}/calls/${callId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

const cancel = (runId: string, callId: string, key?: string) =>
  system.request(`/v1/runs/${runId}/calls/${callId}/cancel`, {
    method: "POST",
    ...(key ? { key } : {}),
  });

async function finished(runId: string, callId: string): Promise<CallView> {
  await expect
    .poll(async () => (await read(runId, callId)).status, { timeout: 10_000 })
    .not.toMatch(/pending|running|awaiting_approval/);
  return read(runId, callId);
}

describe("cancelling a running call over REST", () => {
  it("stops the tool through its abort signal and ends the call cancelled, announced", async () => {
    const runId = system.runId();
    await start(runId, "c1", "test_sleeper", { ms: 30_000 });
    await expect.poll(async () => (await read(runId, "c1")).status).toBe("running");
    // The latest progress is on the call's status once the run's log has it.
    await expect
      .poll(async () => (await read(runId, "c1")).progress?.message, { timeout: 5_000 })
      .toBe("sleeping");

    const asked = await cancel(runId, "c1");
    expect(asked.status).toBe(202);
    expect(asked.headers.get("location")).toBe(`/v1/runs/${runId}/calls/c1`);
    expect(((await asked.json()) as CallView).cancelRequestedAt).toBeDefined();
    // Asking again while it stops is harmless.
    expect([202, 409]).toContain((await cancel(runId, "c1")).status);

    const call = await finished(runId, "c1");
    expect(call.status).toBe("failed");
    expect(call.result?.failure).toMatchObject({
      kind: "cancelled",
      retryable: false,
      recovery: "replan",
    });
    await expect.poll(() => aborted.has("c1")).toBe(true);
    await system.settle();
    const events = await system.events(runId);
    const result = events.find((event) => event.detailType === "ToolResultReceived");
    expect(result?.detail).toMatchObject({ status: "failed", failure: { kind: "cancelled" } });

    // Finished: a cancel now is a conflict that names its status.
    const late = await cancel(runId, "c1");
    expect(late.status).toBe(409);
    expect(await late.text()).toContain("failed");
  });

  it("reaches a handler through the call record when another process writes the cancel", async () => {
    const runId = system.runId();
    await start(runId, "c2", "test_sleeper", { ms: 30_000 });
    await expect.poll(async () => (await read(runId, "c2")).status).toBe("running");
    const elsewhere = new DynamoCallStore({
      client: DynamoDBDocumentClient.from(testDynamoDbClient()),
      tableName: system.tableName,
    });
    const stored = await elsewhere.get(runId, "c2");
    if (!stored) throw new Error("the call is not stored");
    const marked = await elsewhere.cancel(runId, "c2", {
      status: "failed",
      output: "cancelled",
      data: null,
      citations: [],
      failure: { kind: "cancelled", message: "cancelled", retryable: false, recovery: "replan" },
      cached: false,
      stale: false,
      durationMs: 0,
      resultBytes: 0,
      truncated: false,
      completedAt: new Date().toISOString(),
    });
    expect(marked?.outcome).toBe("requested");
    const call = await finished(runId, "c2");
    expect(call.result?.failure?.kind).toBe("cancelled");
    await expect.poll(() => aborted.has("c2")).toBe(true);
  });

  it("cancels a registered MCP server's own request when its call is cancelled", async () => {
    const runId = system.runId();
    await start(runId, "c5", "crawl_site", {});
    await expect.poll(() => upstream.calls.includes("crawl_site"), { timeout: 5_000 }).toBe(true);
    expect((await cancel(runId, "c5")).status).toBe(202);
    const call = await finished(runId, "c5");
    expect(call.result?.failure?.kind).toBe("cancelled");
    await expect.poll(() => upstreamCancelled, { timeout: 5_000 }).toBeDefined();
  });

  it("counts a cancelled call against its run's budget as a call made", async () => {
    const runId = system.runId();
    const policy = await system.request(`/v1/runs/${runId}/policy`, {
      method: "PUT",
      json: { maxCalls: 1 },
    });
    expect(policy.status).toBe(200);
    await start(runId, "b1", "test_sleeper", { ms: 30_000 });
    await expect.poll(async () => (await read(runId, "b1")).status).toBe("running");
    expect((await cancel(runId, "b1")).status).toBe(202);
    expect((await finished(runId, "b1")).result?.failure?.kind).toBe("cancelled");
    const next = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "test_sleeper", input: { ms: 0 }, callId: "b2", wait: 5 },
    });
    const body = (await next.json()) as CallView;
    expect(body.result?.failure?.kind).toBe("budget_exceeded");
  });

  it("leaves a call that finished first as it finished", async () => {
    const runId = system.runId();
    await start(runId, "c3", "test_gate", {});
    // test_gate needs approval on this stage: approve it so it runs.
    const approved = await system.request(`/v1/runs/${runId}/calls/c3/approve`, {
      method: "POST",
    });
    expect(approved.status).toBe(200);
    await expect.poll(() => gates.has("c3"), { timeout: 10_000 }).toBe(true);
    // The tool finishes and the cancel is asked at the same moment.
    gates.get("c3")?.();
    const asked = await cancel(runId, "c3");
    const call = await finished(runId, "c3");
    if (asked.status === 409) {
      expect(call.status).toBe("succeeded");
    } else {
      expect(asked.status).toBe(202);
      // Asked while it ran: it ends one way or the other, never both, and says which.
      expect(["succeeded", "failed"]).toContain(call.status);
      if (call.status === "failed") expect(call.result?.failure?.kind).toBe("cancelled");
    }
    // Never both: one result in the run's log, the one the call record holds.
    await system.settle();
    const results = (await system.events(runId)).filter(
      (event) => event.detailType === "ToolResultReceived",
    );
    expect(results).toHaveLength(1);
    expect(results[0]?.detail.status).toBe(call.status);
  });

  it("fails a call that has not started yet at once, and only for its caller or an admin", async () => {
    const runId = system.runId();
    await start(runId, "c4", "test_gate", {});
    expect((await read(runId, "c4")).status).toBe("awaiting_approval");

    const stranger = await cancel(runId, "c4", otherKey);
    expect(stranger.status).toBe(403);
    expect((await read(runId, "c4")).status).toBe("awaiting_approval");

    const now = await cancel(runId, "c4");
    expect(now.status).toBe(200);
    const call = (await now.json()) as CallView;
    expect(call.status).toBe("failed");
    expect(call.result?.failure?.kind).toBe("cancelled");
    // No longer waiting for anyone's approval.
    const approvals = await system.request("/v1/approvals");
    const waiting = ((await approvals.json()) as { calls: { callId: string }[] }).calls;
    expect(waiting.map((entry) => entry.callId)).not.toContain("c4");
    await system.settle();
    const kinds = (await system.events(runId)).map((event) => event.detailType);
    expect(kinds).toContain("ToolResultReceived");
    expect((await cancel(runId, "missing")).status).toBe(404);
  });
});
