import { createToolbusClient } from "@toolbus/client";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolbusCli } from "./support/cli";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// `toolbus runs show` and `runs policy` against a running API over HTTP, on a stage whose runs
// may make 2 calls and where a member's github_api calls wait for an admin's approval.

let system: TestToolbus;
let server: ApiServer;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus({
    config: {
      runs: { policy: { maxCalls: 2 } },
      approvals: { rules: [{ tools: ["github_api"], roles: ["member"] }], expireAfterMinutes: 15 },
    },
  });
  server = await serveApi(system.app, { port: 0 });
  const admin = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
  memberKey = (await admin.keys.create({ name: "cli-runs", role: "member" })).key;
});
afterAll(async () => {
  await server?.close();
  await system?.stop();
});

const toolbus = (argv: string[], key = memberKey) => runToolbusCli(server.url, argv, key);

describe("toolbus runs show", () => {
  it("shows a run's limits, what it used and has left, and its calls by status", async () => {
    const runId = system.runId();
    const client = createToolbusClient({ baseUrl: server.url, apiKey: memberKey });
    const policies = await client.runs.setPolicy(runId, { maxRepeats: 5 });
    expect(policies.policy).toEqual({ maxCalls: 2, maxRepeats: 5 });
    for (const text of ["One.", "Two.", "Three."]) {
      await client.call("readability_analyzer", { text }, { runId, wait: 10 });
    }

    const shown = await toolbus(["runs", "show", runId]);
    expect(shown).toMatchObject({ code: 0, stderr: "" });
    expect(shown.stdout).toContain(`Run:         ${runId}\n`);
    expect(shown.stdout).toMatch(/^Limits:\s+maxCalls 2, maxRepeats 5$/m);
    expect(shown.stdout).toMatch(/^Own limits:\s+maxRepeats 5$/m);
    expect(shown.stdout).toMatch(/^Used:\s+2 call\(s\), cost 2, since \d{4}-/m);
    expect(shown.stdout).toMatch(/^Left:\s+calls 0$/m);
    expect(shown.stdout).toMatch(/^By tool:\s+readability_analyzer 2$/m);
    // The third call was refused, and recorded as failed.
    const calls = shown.stdout
      .match(/^Calls:\s+(.+)$/m)?.[1]
      ?.split(", ")
      .sort();
    expect(calls).toEqual(["failed 1", "succeeded 2"]);

    const asJson = JSON.parse((await toolbus(["runs", "show", runId, "--json"])).stdout) as {
      usage: { calls: number };
      remaining: { calls: number };
    };
    expect(asJson).toMatchObject({ usage: { calls: 2 }, remaining: { calls: 0 } });
  });

  it("refuses a policy that loosens the stage's, and exits 2 for a bad run id", async () => {
    const client = createToolbusClient({ baseUrl: server.url, apiKey: memberKey });
    await expect(client.runs.setPolicy(system.runId(), { maxCalls: 3 })).rejects.toThrow(
      /only tighten/,
    );
    expect((await toolbus(["runs", "show", "bad id!"])).code).toBe(2);
  });
});

describe("toolbus runs policy", () => {
  it("sets a run's own limits once, only tighter than the stage's", async () => {
    const runId = system.runId();
    const set = await toolbus([
      "runs",
      "policy",
      runId,
      "--max-calls",
      "1",
      "--max-calls-per-tool",
      "1",
      "--max-seconds",
      "600",
      "--max-cost",
      "5",
      "--max-repeats",
      "1",
    ]);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    expect(set.stdout).toMatch(
      /^Own limits:\s+maxCalls 1, maxCallsPerTool 1, maxSeconds 600, maxCost 5, maxRepeats 1$/m,
    );
    expect(set.stdout).toMatch(/^Stage limits:\s+maxCalls 2$/m);
    expect(set.stdout).toMatch(
      /^Limits:\s+maxCalls 1, maxCallsPerTool 1, maxSeconds 600, maxCost 5, maxRepeats 1$/m,
    );

    // The run works under it: its second call is refused by its own limit, not the stage's.
    const client = createToolbusClient({ baseUrl: server.url, apiKey: memberKey });
    await client.call("readability_analyzer", { text: "One." }, { runId, wait: 10 });
    const refused = await client.call(
      "readability_analyzer",
      { text: "Two." },
      { runId, wait: 10 },
    );
    expect(refused.status === "failed" && refused.result.failure.kind).toBe("budget_exceeded");
    const shown = await toolbus(["runs", "show", runId]);
    expect(shown.stdout).toMatch(/^Left:\s+calls 0, cost 4, seconds \d+$/m);

    // Once: another policy is the API's 409; a looser one than the stage's its 400.
    const again = await toolbus(["runs", "policy", runId, "--max-calls", "2"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("[409 ");
    const looser = await toolbus(["runs", "policy", system.runId(), "--max-calls", "3", "--json"]);
    expect(looser.code).toBe(1);
    expect(JSON.parse(looser.stderr)).toMatchObject({ error: { status: 400 } });

    const asJson = await toolbus([
      "runs",
      "policy",
      system.runId(),
      "--max-repeats",
      "4",
      "--json",
    ]);
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual({
      policy: { maxCalls: 2, maxRepeats: 4 },
      runPolicy: { maxRepeats: 4 },
      stagePolicy: { maxCalls: 2 },
    });
  });

  it("has help that names every limit", async () => {
    const help = await toolbus(["runs", "policy", "--help"]);
    expect(help.code).toBe(0);
    for (const option of [
      "--max-calls <n>",
      "--max-calls-per-tool <n>",
      "--max-seconds <n>",
      "--max-cost <n>",
      "--max-repeats <n>",
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect((await toolbus(["runs", "--help"])).stdout).toContain("toolbus runs policy <runId>");
  });
});

describe("a call that waits for approval, from the command line", () => {
  it("approvals list shows when it expires, and events describes the request", async () => {
    const runId = system.runId();
    const client = createToolbusClient({ baseUrl: server.url, apiKey: memberKey });
    const before = Date.now();
    const waiting = await client.call(
      "github_api",
      { action: "get_issue", owner: "acme", repo: "site", number: 7 },
      { runId, callId: "needs-yes" },
    );
    expect(waiting.status).toBe("awaiting_approval");
    // The API's view says until when the call waits, so the CLI has something to print.
    const expiresAt = waiting.approval?.expiresAt ?? "";
    const minutes = (Date.parse(expiresAt) - before) / 60_000;
    expect(minutes).toBeGreaterThan(14.9);
    expect(minutes).toBeLessThan(15.1);

    const listed = await toolbus(["approvals", "list"], system.adminKey);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    const row = listed.stdout.split("\n").find((line) => line.includes(`${runId} / needs-yes`));
    expect(row).toMatch(
      new RegExp(`^${expiresAt.replace(/[.]/g, "\\.")}\\s+github_api\\s+\\S+ \\(member\\)\\s+`),
    );
    expect(listed.stdout).not.toContain("?");

    const events = await toolbus(["events", runId]);
    expect(events).toMatchObject({ code: 0 });
    const [header, ...rows] = events.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^TIME\s+EVENT\s+CALL\s+TOOL\s+DETAIL$/);
    expect(rows).toEqual([
      expect.stringMatching(
        new RegExp(
          `ToolCallApprovalRequested\\s+needs-yes\\s+github_api\\s+awaiting approval until ${expiresAt.replace(/[.]/g, "\\.")}, by \\S+ \\(member\\)$`,
        ),
      ),
    ]);
    expect(events.stdout).not.toMatch(/undefined|NaN/);

    // Once denied, the log holds the request, then the scheduling and the failed result.
    await createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey }).approvals.deny(
      runId,
      "needs-yes",
      "not today",
    );
    await system.settle();
    const after = await toolbus(["events", runId]);
    expect(after.code).toBe(0);
    expect(after.stdout).not.toMatch(/undefined|NaN/);
    expect(after.stdout).toMatch(/ToolResultReceived\s+needs-yes\s+github_api\s+failed denied: /);
  });
});
