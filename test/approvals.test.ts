import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSweeper } from "../packages/core/src/runtime/sweeper";
import { runToolbusCli } from "./support/cli";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * Calls that wait for a person: the stage asks approval for readability_analyzer when a member
 * calls it (an admin's calls run at once); admins decide. The round trip over REST and over
 * MCP with the official client, denial, expiry with an injected clock, who may decide, and the
 * events in the run's log.
 */
let system: TestToolbus;
let api: ApiServer;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus({
    config: {
      approvals: { rules: [{ tools: ["readability_analyzer"], roles: ["member"] }] },
    },
  });
  api = await serveApi(system.app, { port: 0 });
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "approvals-member", role: "member" },
  });
  memberKey = ((await response.json()) as { key: string }).key;
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
});

interface CallView {
  callId: string;
  status: string;
  statusUrl?: string;
  result?: { output: string; failure?: { kind: string; recovery: string } };
}

async function ask(runId: string, callId: string, key = memberKey) {
  return system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    key,
    json: { tool: "readability_analyzer", input: { text: "Short words." }, callId, wait: 5 },
  });
}

async function decide(runId: string, callId: string, verdict: string, init: object = {}) {
  return system.request(`/v1/runs/${runId}/calls/${callId}/${verdict}`, {
    method: "POST",
    ...init,
  });
}

async function view(runId: string, callId: string): Promise<CallView> {
  return (await (await system.request(`/v1/runs/${runId}/calls/${callId}`)).json()) as CallView;
}

const detailTypes = async (runId: string, callId: string) =>
  (await system.events<{ detailType: string; detail: { callId: string } }>(runId))
    .filter((event) => event.detail.callId === callId)
    .map((event) => event.detailType);

describe("a call that needs approval, over REST", () => {
  it("waits for a person, runs once approved, and keeps the decision final", async () => {
    const runId = system.runId();
    const asked = await ask(runId, "c1");
    // Not run, not an error: accepted, with where to follow it. The wait was not spent.
    expect(asked.status).toBe(202);
    expect(await asked.json()).toMatchObject({
      callId: "c1",
      status: "awaiting_approval",
      statusUrl: `/v1/runs/${runId}/calls/c1`,
    });
    await system.settle();
    expect(await detailTypes(runId, "c1")).toEqual(["ToolCallApprovalRequested"]);
    const waiting = (await (await system.request("/v1/approvals")).json()) as {
      calls: { callId: string; parentRunId: string }[];
    };
    expect(waiting.calls.some((call) => call.parentRunId === runId)).toBe(true);
    // The caller may not decide its own call: deciding needs the approve permission (admin).
    expect((await decide(runId, "c1", "approve", { key: memberKey })).status).toBe(403);
    const approved = await decide(runId, "c1", "approve");
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ status: "pending" });
    await system.settle();
    await expect.poll(async () => (await view(runId, "c1")).status).toBe("succeeded");
    expect(await detailTypes(runId, "c1")).toEqual([
      "ToolCallApprovalRequested",
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
    // Final: a second decision is a conflict, and the same call asked again is the outcome.
    expect((await decide(runId, "c1", "deny")).status).toBe(409);
    const again = await ask(runId, "c1");
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "succeeded" });
    const stored = await system.toolbus.stores.calls.get(runId, "c1");
    expect(stored?.approval?.decision).toMatchObject({
      approved: true,
      by: { id: "admin-bootstrap", role: "admin" },
      at: expect.any(String),
    });
  });

  it("fails a denied call as denied, with the reason, and announces it", async () => {
    const runId = system.runId();
    expect((await ask(runId, "c2")).status).toBe(202);
    const denied = await decide(runId, "c2", "deny", { json: { reason: "not this week" } });
    expect(denied.status).toBe(200);
    const call = (await denied.json()) as CallView;
    expect(call.status).toBe("failed");
    expect(call.result?.failure).toMatchObject({ kind: "denied", recovery: "replan" });
    expect(call.result?.output).toContain("not this week");
    await system.settle();
    expect(await detailTypes(runId, "c2")).toEqual([
      "ToolCallApprovalRequested",
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("lets calls the rules do not name run at once", async () => {
    const response = await ask(system.runId(), "by-admin", system.adminKey);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "succeeded" });
  });

  it("answers 404 for a call that does not exist, and 409 for one that needs no approval", async () => {
    const runId = system.runId();
    expect((await decide(runId, "nope", "approve")).status).toBe(404);
    await ask(runId, "plain", system.adminKey);
    expect((await decide(runId, "plain", "approve")).status).toBe(409);
    const tooLong = await decide(runId, "plain", "deny", { json: { reason: "x".repeat(1001) } });
    expect(tooLong.status).toBe(400);
  });
});

describe("approvals nobody decides", () => {
  it("expire: the sweeper fails them as approval_expired at their deadline, not before", async () => {
    const runId = system.runId();
    expect((await ask(runId, "c3")).status).toBe(202);
    const sweepAt = (minutes: number) =>
      createSweeper(() => ({
        calls: system.toolbus.stores.calls,
        bus: system.toolbus.publisher,
        now: () => new Date(Date.now() + minutes * 60_000),
      }))();
    await sweepAt(14);
    expect((await view(runId, "c3")).status).toBe("awaiting_approval");
    await sweepAt(16);
    const expired = await view(runId, "c3");
    expect(expired.status).toBe("failed");
    expect(expired.result?.failure).toMatchObject({ kind: "approval_expired", recovery: "replan" });
    expect((await decide(runId, "c3", "approve")).status).toBe(409);
    await system.settle();
    expect(await detailTypes(runId, "c3")).toEqual([
      "ToolCallApprovalRequested",
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });
});

describe("a call that needs approval, over MCP", () => {
  it("says approval is pending, and the same tools/call with the same call id later returns the outcome", async () => {
    const runId = system.runId();
    const client = new Client({ name: "approvals-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${memberKey}`, "X-Toolbus-Run-Id": runId },
        },
      }),
    );
    try {
      const callTool = async () =>
        (await client.callTool({
          name: "readability_analyzer",
          arguments: { text: "Short words." },
          _meta: { "toolbus/callId": "m1" },
        })) as CallToolResult;
      const pending = await callTool();
      expect(pending.isError).toBe(true);
      expect(pending._meta).toMatchObject({
        "toolbus/status": "awaiting_approval",
        "toolbus/approval": { decideUrl: `/v1/runs/${runId}/calls/m1/approve` },
      });
      expect(JSON.stringify(pending.content)).toContain("approval");
      expect((await decide(runId, "m1", "approve")).status).toBe(200);
      await system.settle();
      const outcome = await callTool();
      expect(outcome.isError).toBe(false);
      expect(outcome._meta).toMatchObject({ "toolbus/status": "succeeded" });
    } finally {
      await client.close();
    }
  });
});

describe("a call that needs approval, from a stateless MCP client that names no run", () => {
  const statelessClient = async () => {
    const client = new Client({ name: "approvals-stateless", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${memberKey}` } },
      }),
    );
    return client;
  };
  const callTool = (client: Client, meta: Record<string, string>) =>
    client.callTool({
      name: "readability_analyzer",
      arguments: { text: "Short words." },
      _meta: meta,
    }) as Promise<CallToolResult>;

  it("reaches the approved call again by its call id alone, on a new connection", async () => {
    const callId = `stateless-${system.runId()}`;
    const first = await statelessClient();
    let runId: string;
    try {
      const pending = await callTool(first, { "toolbus/callId": callId });
      expect(pending._meta).toMatchObject({ "toolbus/status": "awaiting_approval" });
      runId = pending._meta?.["toolbus/runId"] as string;
      // The message says what to send back: the run and the call, nothing else.
      expect(JSON.stringify(pending.content)).toContain(
        JSON.stringify(JSON.stringify({ "toolbus/runId": runId, "toolbus/callId": callId })).slice(
          1,
          -1,
        ),
      );
    } finally {
      await first.close();
    }
    expect((await decide(runId, callId, "approve")).status).toBe(200);
    await system.settle();
    const second = await statelessClient();
    try {
      const outcome = await callTool(second, { "toolbus/callId": callId });
      expect(outcome._meta).toMatchObject({
        "toolbus/status": "succeeded",
        "toolbus/runId": runId,
        "toolbus/callId": callId,
      });
      // Named explicitly, the run is honoured just the same.
      const named = await callTool(second, { "toolbus/runId": runId, "toolbus/callId": callId });
      expect(named._meta).toMatchObject({ "toolbus/status": "succeeded", "toolbus/runId": runId });
    } finally {
      await second.close();
    }
    // Still one call awaiting nothing: the repeats opened no second approval request.
    const waiting = await system.request("/v1/approvals");
    const open = ((await waiting.json()) as { calls: { callId: string }[] }).calls;
    expect(open.filter((call) => call.callId === callId)).toEqual([]);
  });

  it("keeps one key's call ids apart from another's", async () => {
    const callId = `shared-${system.runId()}`;
    const member = await statelessClient();
    try {
      const mine = await callTool(member, { "toolbus/callId": callId });
      const admin = new Client({ name: "approvals-admin", version: "1.0.0" });
      await admin.connect(
        new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${system.adminKey}` } },
        }),
      );
      try {
        const theirs = await callTool(admin, { "toolbus/callId": callId });
        expect(theirs._meta?.["toolbus/runId"]).not.toBe(mine._meta?.["toolbus/runId"]);
      } finally {
        await admin.close();
      }
    } finally {
      await member.close();
    }
  });
});

describe("toolbus approvals", () => {
  const toolbus = (argv: string[], key = system.adminKey) => runToolbusCli(api.url, argv, key);

  it("lists what waits, and approves or denies from the command line", async () => {
    const runId = system.runId();
    expect((await ask(runId, "cli-1")).status).toBe(202);
    expect((await ask(runId, "cli-2")).status).toBe(202);
    const listed = await toolbus(["approvals", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^EXPIRES\s+TOOL\s+REQUESTED BY\s+RUN \/ CALL/);
    expect(listed.stdout).toContain(`${runId} / cli-1`);
    const asJson = await toolbus(["approvals", "list", "--json"]);
    const calls = JSON.parse(asJson.stdout) as { callId: string; status: string }[];
    expect(calls.filter((call) => call.callId.startsWith("cli-")).map((c) => c.status)).toEqual([
      "awaiting_approval",
      "awaiting_approval",
    ]);
    const approved = await toolbus(["approvals", "approve", runId, "cli-1"]);
    expect(approved).toMatchObject({ code: 0, stderr: "" });
    expect(approved.stdout).toContain(`Approved readability_analyzer call cli-1 of run ${runId}`);
    const denied = await toolbus(["approvals", "deny", runId, "cli-2", "--reason", "no"]);
    expect(denied.code).toBe(0);
    expect((await view(runId, "cli-2")).result?.output).toContain("no");
    // A member may not decide: the server's 403, as an error and exit code 1.
    const refused = await toolbus(["approvals", "deny", runId, "cli-1"], memberKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("403");
  });
});
