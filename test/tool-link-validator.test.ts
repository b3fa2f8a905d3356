import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkValidator, linkValidatorToolset } from "../packages/tools/src/link-validator";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/** Requests the loopback site received, as "METHOD /path". */
const hits: string[] = [];
let server: Server;
let base = "";
let system: TestToolbus;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const routes: Record<string, [number, Record<string, string>]> = {
      "/docs": [200, { "content-type": "text/html" }],
      "/old-docs": [301, { location: "/docs" }],
      "/gone": [404, {}],
      "/to-metadata": [302, { location: "http://169.254.169.254/latest/meta-data/" }],
    };
    const [status, headers] = routes[req.url ?? ""] ?? [404, {}];
    res.writeHead(status, headers);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  system = await startTestToolbus({
    // The lead may already list the tool among the built-ins; register it exactly once.
    tools: [...builtinTools.filter((t) => t.spec.id !== linkValidator.spec.id), linkValidator],
    toolsets: [
      ...builtinToolsets.filter((t) => t.name !== linkValidatorToolset.name),
      linkValidatorToolset,
    ],
    config: { outbound: { allowHosts: ["127.0.0.1"] } },
  });
});

afterAll(async () => {
  await system?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type CallView = {
  status: string;
  callId: string;
  result: {
    output: string;
    data: {
      results: { url: string; reachable: boolean; status?: number; error?: { kind: string } }[];
      summary: Record<string, number>;
    };
    cached: boolean;
  };
};

async function call(runId: string, input: unknown, callId: string) {
  return system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "link_validator", input, callId, wait: 15 },
  });
}

describe("link_validator through the API", () => {
  it("checks links against a real site, records both events, and caches the result", async () => {
    const runId = system.runId();
    const urls = [`${base}/old-docs`, `${base}/gone`, `${base}/to-metadata`];
    const response = await call(runId, { urls }, "check-1");
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view.status).toBe("succeeded");
    expect(view.result.cached).toBe(false);
    expect(view.result.data.summary).toEqual({ total: 3, reachable: 1, broken: 1, blocked: 1 });
    expect(view.result.data.results).toMatchObject([
      { url: `${base}/old-docs`, reachable: true, status: 200, finalUrl: `${base}/docs` },
      { url: `${base}/gone`, reachable: false, status: 404, error: { kind: "http" } },
      { url: `${base}/to-metadata`, reachable: false, error: { kind: "blocked" } },
    ]);
    expect(view.result.output).toMatch(/^Checked 3 links: 1 reachable, 1 broken, 1 blocked\./);

    await system.settle();
    const events = (await (await system.request(`/v1/runs/${runId}/events`)).json()) as {
      events: { detailType: string; detail: { callId: string; toolId: string; status?: string } }[];
    };
    // Its progress (links checked so far) sits between the two; the throttle decides how many.
    const closing = events.events.filter((e) => e.detailType !== "ToolCallProgress");
    expect(closing.map((e) => `${e.detailType} ${e.detail.callId} ${e.detail.toolId}`)).toEqual([
      "ToolCallScheduled check-1 link_validator",
      "ToolResultReceived check-1 link_validator",
    ]);
    expect(events.events[0]?.detailType).toBe("ToolCallScheduled");
    expect(events.events.at(-1)?.detailType).toBe("ToolResultReceived");
    expect(closing[1]?.detail.status).toBe("succeeded");

    const before = hits.length;
    const again = (await (await call(system.runId(), { urls }, "check-2")).json()) as CallView;
    expect(again.result.cached).toBe(true);
    expect(again.result.data).toEqual(view.result.data);
    expect(hits.length).toBe(before);
  });

  it("rejects input that is not a list of http(s) URLs with 400, scheduling nothing", async () => {
    const runId = system.runId();
    const response = await call(runId, { urls: ["ftp://files.example/x"] }, "bad-1");
    expect(response.status).toBe(400);
    await system.settle();
    const events = (await (await system.request(`/v1/runs/${runId}/events`)).json()) as {
      events: unknown[];
    };
    expect(events.events).toEqual([]);
  });
});
