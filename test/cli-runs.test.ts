import { createToolbusClient } from "@toolbus/client";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolbusCli } from "./support/cli";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// `toolbus runs show` against a running API over HTTP, on a stage whose runs may make 2 calls.

let system: TestToolbus;
let server: ApiServer;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus({ config: { runs: { policy: { maxCalls: 2 } } } });
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
