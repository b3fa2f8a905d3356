import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { webSearch, webSearchToolset } from "@toolbus/tools/web-search";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  fixture,
  type Route,
  sendHtml,
  startUpstream,
  type Upstream,
} from "../packages/tools/src/web-search/testing";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const BRAVE_KEY = "brave-e2e-key-51d0c8a2";

// builtinTools already lists web_search: registering it twice would be refused.
const tools = [...builtinTools.filter((t) => t.spec.id !== webSearch.spec.id), webSearch];
const toolsets = [
  ...builtinToolsets.filter((t) => t.name !== webSearchToolset.name),
  webSearchToolset,
];

interface CallView {
  parentRunId: string;
  callId: string;
  toolId: string;
  toolset: string;
  status: string;
  result: {
    output: string;
    data: {
      query?: string;
      provider?: string;
      results: { title: string; url: string }[];
      links?: unknown[];
    };
    citations: { url: string; title?: string }[];
    cached: boolean;
    stale: boolean;
    failure?: { kind: string; message: string; retryAfterMs?: number; recovery: string };
  };
}

interface EventView {
  detailType: string;
  detail: Record<string, unknown>;
}

let upstream: Upstream;
let route: Route;

beforeAll(async () => {
  upstream = await startUpstream((request, response) => route(request, response));
});
afterAll(() => upstream.close());
beforeEach(() => {
  route = (_, response) => sendHtml(response, fixture("web_search", "duckduckgo-results.html"));
});

function start(
  tool: Record<string, unknown>,
  secrets: Record<string, string> = {},
  staticLinks?: Record<string, unknown>,
) {
  return startTestToolbus({
    tools,
    toolsets,
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      tools: {
        web_search: { duckduckgoUrl: `${upstream.origin}/html/`, ...tool },
        ...(staticLinks ? { static_links: staticLinks } : {}),
      },
    },
    secrets,
  });
}

async function call(system: TestToolbus, input: unknown, runId = system.runId()) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "web_search", input, wait: 15 },
  });
  return { response, runId };
}

describe("web_search through the API, with DuckDuckGo on loopback", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await start({}, { SEARCH_API_KEY: BRAVE_KEY });
  });
  afterAll(() => system.stop());

  it("answers with results and citations and announces both events under the run", async () => {
    const before = upstream.requests.length;
    const { response, runId } = await call(system, { query: "typescript zod", max_results: 3 });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view).toMatchObject({
      parentRunId: runId,
      toolId: "web_search",
      toolset: "web_search",
      status: "succeeded",
      result: { cached: false, stale: false },
    });
    expect(view.result.data).toMatchObject({ query: "typescript zod", provider: "duckduckgo" });
    expect(view.result.data.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://www.totaltypescript.com/tutorials/zod",
    ]);
    expect(view.result.citations.map((c) => c.url)).toEqual(
      view.result.data.results.map((r) => r.url),
    );
    expect(view.result.output).toContain("1. [Zod | TypeScript-first schema validation");
    expect(upstream.requests.length - before).toBe(1);

    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(seen[1]?.detail).toMatchObject({
      parentRunId: runId,
      callId: view.callId,
      toolId: "web_search",
      status: "succeeded",
      cached: false,
    });
    expect(JSON.stringify(seen)).not.toContain(BRAVE_KEY);
  });

  it("serves the same search again from the cache without asking DuckDuckGo", async () => {
    const input = { query: "zod discriminated union", recency: "month" };
    const first = (await (await call(system, input)).response.json()) as CallView;
    const before = upstream.requests.length;
    const { response, runId } = await call(system, input);
    const second = (await response.json()) as CallView;
    expect(second.result).toMatchObject({ cached: true, stale: false });
    expect(second.result.data).toEqual(first.result.data);
    expect(upstream.requests.length).toBe(before);
    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(seen[1]?.detail).toMatchObject({ cached: true });
  });

  it("rejects input outside the schema with 400 before scheduling anything", async () => {
    const { response, runId } = await call(system, { query: "zod", max_results: 50 });
    expect(response.status).toBe(400);
    expect(await system.events<EventView>(runId)).toEqual([]);
  });

  it("fails a rate-limited search as a result with retryAfterMs, not as an HTTP error", async () => {
    route = (_, response) => {
      response.writeHead(429, { "retry-after": "120" });
      response.end();
    };
    const { response, runId } = await call(system, { query: "rate limited search" });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "rate_limited", retryAfterMs: 120_000 });
    const seen = await system.events<EventView>(runId);
    expect(seen[1]?.detail).toMatchObject({ status: "failed" });
  });

  it("says its fallback has nothing to serve when the SSRF guard refuses a redirect and no links are configured", async () => {
    route = (_, response) => {
      response.writeHead(302, { location: "http://10.0.0.1/html/" });
      response.end();
    };
    const { response } = await call(system, { query: "redirected search" });
    const view = (await response.json()) as CallView;
    // static_links without links is no stand-in: the failure says so instead of an empty list.
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(view.result.failure?.message).toContain(
      "web_search's fallback static_links has no links configured on this stage",
    );
  });
});

describe("web_search set to Brave without SEARCH_API_KEY", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await start(
      { provider: "brave", braveUrl: `${upstream.origin}/res/v1/web/search` },
      {},
      { links: [{ platform: "docs", url: "https://docs.example.com/", label: "Docs" }] },
    );
  });
  afterAll(() => system.stop());

  it("is unavailable and answers through its fallback, static_links, which has links", async () => {
    const before = upstream.requests.length;
    const { response, runId } = await call(system, { query: "typescript zod" });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView & {
      result: { fallback?: { from: string; to: string } };
    };
    expect(view.status).toBe("succeeded");
    expect(view.result.fallback).toMatchObject({ from: "web_search", to: "static_links" });
    expect(view.result.data).toMatchObject({ total: 1 });
    expect(view.result.output).toContain("https://docs.example.com/");
    expect(upstream.requests.length).toBe(before);
    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });
});
