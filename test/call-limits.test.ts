import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * The longest one call may run on a stage (`calls.longestRunSeconds`; on AWS the tool
 * functions' timeout less what storing the result takes): a registration whose tools would
 * run longer is refused, naming the field and the limit, so no registered tool can outlive the
 * function that runs it.
 */

let system: TestToolbus;

beforeAll(async () => {
  system = await startTestToolbus({
    config: { outbound: { allowHosts: ["127.0.0.1"] }, calls: { longestRunSeconds: 60 } },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
});

const httpToolset = (timeoutMs: number) => ({
  kind: "http",
  name: "slow_api",
  description: "A slow API",
  owner: "team-slow",
  tools: [
    {
      id: "slow_report",
      title: "Slow report",
      description: "Builds a report.",
      category: "reference",
      usageHint: "When a report is asked for.",
      url: "http://127.0.0.1:9/report",
      inputSchema: { type: "object", properties: {} },
      timeoutMs,
    },
  ],
});

describe("the longest a call may run on a stage", () => {
  it("refuses an http tool whose timeout is longer, naming the field and the limit", async () => {
    const response = await system.request("/v1/registered-toolsets/slow_api", {
      method: "PUT",
      json: httpToolset(120_000),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: { message: string; details: { path: string; message: string }[] };
    };
    expect(body.error.details).toContainEqual({
      path: "tools.0.timeoutMs",
      message: expect.stringContaining("longer than one call may run on this stage (60 s"),
    });
    expect((await system.request("/v1/tools/slow_report")).status).toBe(404);
  });

  it("refuses an MCP server whose tools' timeout is longer, before reaching the server", async () => {
    const response = await system.request("/v1/registered-toolsets/slow_mcp", {
      method: "PUT",
      json: {
        kind: "mcp",
        name: "slow_mcp",
        description: "A slow server",
        owner: "team-slow",
        url: "http://127.0.0.1:9/mcp",
        defaults: { timeoutMs: 61_000 },
      },
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("defaults.timeoutMs");
  });

  it("accepts a timeout within it", async () => {
    const response = await system.request("/v1/registered-toolsets/slow_api", {
      method: "PUT",
      json: httpToolset(60_000),
    });
    expect(response.status).toBe(201);
  });
});
