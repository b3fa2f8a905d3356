import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createToolbusClient } from "@toolbus/client";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * On AWS the API sits behind API Gateway, which buffers every response, and names the stage's
 * streaming endpoint in `/health`; event streams are followed there. Here the "API" is a
 * server that answers `/health` with that name and refuses everything else, and the streaming
 * endpoint is the real app.
 */
let system: TestToolbus;
let streaming: ApiServer;
let api: Server;
let apiUrl: string;
const apiPaths: string[] = [];

beforeAll(async () => {
  system = await startTestToolbus();
  streaming = await serveApi(system.app, { port: 0 });
  api = createServer((req, res) => {
    apiPaths.push(req.url ?? "");
    if (req.url === "/health") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ status: "ok", stage: "test", streamUrl: `${streaming.url}/` }));
      return;
    }
    res.statusCode = 502;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ error: { code: "buffered", message: "not here" } }));
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  await streaming.close();
  await system.stop();
});

async function callOnce(runId: string, callId: string) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: "The cat sat." }, callId, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

/** The first `count` events a follower sees, then it lets go. */
async function firstEvents(events: AsyncIterable<{ detailType: string }>, count: number) {
  const seen: string[] = [];
  for await (const event of events) {
    seen.push(event.detailType);
    if (seen.length === count) break;
  }
  return seen;
}

describe("following events where the stage streams them", () => {
  it("follows a run at the streaming URL the API names in /health, asking it once", async () => {
    const client = createToolbusClient({ baseUrl: apiUrl, apiKey: system.adminKey });
    const runId = system.runId();
    await callOnce(runId, "first");
    const controller = new AbortController();
    const seen = await firstEvents(
      client.events(runId, { follow: true, signal: controller.signal }),
      2,
    );
    controller.abort();
    expect(seen).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    // Again, on the same client: the name is remembered.
    const again = new AbortController();
    await firstEvents(client.events(runId, { follow: true, signal: again.signal }), 1);
    again.abort();
    expect(apiPaths.filter((path) => path === "/health")).toHaveLength(1);
    expect(apiPaths.filter((path) => path.includes("/events"))).toEqual([]);
  });

  it("follows at the URL it is given, or at the API's own when told to", async () => {
    const runId = system.runId();
    await callOnce(runId, "given");
    const given = createToolbusClient({
      baseUrl: "http://127.0.0.1:9/unused",
      streamUrl: streaming.url,
      apiKey: system.adminKey,
    });
    const controller = new AbortController();
    expect(
      await firstEvents(given.events(runId, { follow: true, signal: controller.signal }), 2),
    ).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    controller.abort();

    const own = createToolbusClient({ baseUrl: apiUrl, streamUrl: false, apiKey: system.adminKey });
    await expect(
      firstEvents(own.events(runId, { follow: true, maxRetries: 0 }), 1),
    ).rejects.toMatchObject({ code: "buffered" });
  });

  it("refuses a stream URL that is not http(s)", () => {
    expect(() =>
      createToolbusClient({ baseUrl: apiUrl, streamUrl: "ftp://x", apiKey: system.adminKey }),
    ).toThrow(/stream URL must be an http\(s\) URL/);
  });
});

describe("an API with a streaming endpoint apart from it", () => {
  it("names it in /health and points agent files' MCP servers at it", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, streamUrl: "https://stream.example" });
    const health = await app.request("/health");
    expect(await health.json()).toMatchObject({ streamUrl: "https://stream.example" });
    const rendered = await app.request("/v1/agents/render", {
      method: "POST",
      headers: { authorization: `Bearer ${system.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        harness: "claude-code",
        agent: { name: "reviewer", description: "Reviews.", prompt: "Review.", tools: ["Read"] },
        enrichers: [{ type: "addToolbusCatalog", surface: "search" }],
      }),
    });
    expect(rendered.status).toBe(200);
    const file = (await rendered.json()) as { mcpServersFile?: { content: string } };
    expect(JSON.parse(file.mcpServersFile?.content ?? "{}").mcpServers.toolbus.url).toBe(
      "https://stream.example/mcp?surface=search",
    );
  });

  it("serves only event streams, /mcp and /health when it is that endpoint", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, surface: "streaming" });
    const auth = { authorization: `Bearer ${system.adminKey}` };
    expect((await app.request("/health")).status).toBe(200);
    expect((await app.request(`/v1/runs/${system.runId()}/events`, { headers: auth })).status).toBe(
      200,
    );
    for (const [method, path] of [
      ["GET", "/v1/tools"],
      ["POST", `/v1/runs/${system.runId()}/calls`],
      ["GET", "/openapi.json"],
      ["DELETE", "/v1/keys/x"],
    ] as const) {
      const response = await app.request(path, { method, headers: auth });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(await response.text()).toContain("served by the API URL");
    }
  });
});

describe("a /health that names a host the key must not go to", () => {
  it("keeps following at the API's own URL", async () => {
    const runId = system.runId();
    await callOnce(runId, "elsewhere");
    const seen: string[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push(String(input));
      if (String(input).endsWith("/health")) {
        return Promise.resolve(
          Response.json({ status: "ok", stage: "test", streamUrl: "http://10.0.0.5:9/" }),
        );
      }
      return fetch(input, init);
    };
    const client = createToolbusClient({
      baseUrl: streaming.url,
      apiKey: system.adminKey,
      fetch: recording,
    });
    const controller = new AbortController();
    expect(
      await firstEvents(client.events(runId, { follow: true, signal: controller.signal }), 2),
    ).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    controller.abort();
    expect(seen.some((url) => url.includes("10.0.0.5"))).toBe(false);
    expect(seen.filter((url) => url.startsWith(`${streaming.url}/v1/runs/`))).not.toEqual([]);
  });
});
