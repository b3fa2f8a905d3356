import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rssFeed, rssFeedToolset } from "../packages/tools/src/rss-feed";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const fixture = (name: string) =>
  readFileSync(new URL(`../packages/tools/src/rss-feed/fixtures/${name}`, import.meta.url));

/** Paths the loopback feed server was asked for, in order. */
const hits: string[] = [];
let server: Server;
let base = "";
let system: TestToolbus;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url === "/feed.xml") {
      res.writeHead(200, { "content-type": "application/rss+xml" });
      res.end(fixture("rss2.xml"));
    } else if (req.url === "/releases.atom") {
      res.writeHead(200, { "content-type": "application/atom+xml" });
      res.end(fixture("atom.xml"));
    } else if (req.url === "/busy.xml") {
      res.writeHead(429, { "retry-after": "90" });
      res.end();
    } else if (req.url === "/index.html") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(fixture("not-a-feed.html"));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  system = await startTestToolbus({
    // The lead may already list the tool among the built-ins; register it exactly once.
    tools: [...builtinTools.filter((t) => t.spec.id !== rssFeed.spec.id), rssFeed],
    toolsets: [...builtinToolsets.filter((t) => t.name !== rssFeedToolset.name), rssFeedToolset],
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      tools: { rss_feed: { feedUrl: `${base}/feed.xml` } },
    },
  });
});

afterAll(async () => {
  await system?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type CallView = {
  status: string;
  result: {
    output: string;
    data?: {
      feed: { title: string; format: string };
      items: { title: string; link?: string; published?: string }[];
    };
    citations: { url: string; title?: string }[];
    failure?: { kind: string; message: string; retryAfterMs?: number; recovery: string };
    cached: boolean;
  };
};

async function call(runId: string, input: unknown, callId: string): Promise<CallView> {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "rss_feed", input, callId, wait: 15 },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

async function eventsOf(runId: string) {
  await system.settle();
  const body = (await (await system.request(`/v1/runs/${runId}/events`)).json()) as {
    events: { detailType: string; detail: { callId: string; status?: string; cached?: boolean } }[];
  };
  return body.events.map((e) =>
    `${e.detailType} ${e.detail.callId} ${e.detail.status ?? ""}`.trim(),
  );
}

describe("rss_feed through the API", () => {
  it("reads the stage's configured feed, newest first, with citations and both events", async () => {
    const runId = system.runId();
    const view = await call(runId, { action: "get_configured", limit: 3 }, "feed-1");
    expect(view.status).toBe("succeeded");
    expect(view.result.data?.feed).toEqual({
      title: "Acme Engineering & Friends",
      link: "https://blog.acme.dev/",
      format: "rss2",
    });
    expect(view.result.data?.items.map((i) => i.title)).toEqual([
      "It’s time to talk about <caching>",
      "Widget 2.3 is out",
      "Only a Dublin Core date",
    ]);
    expect(view.result.citations.map((c) => c.url)).toEqual([
      "https://blog.acme.dev/2025/03/caching",
      "https://blog.acme.dev/2025/03/widget-2-3",
      `${base}/2025/02/dc-date`,
    ]);
    expect(view.result.output).toContain("(RSS 2.0, 3 newest of 6 items)");
    expect(await eventsOf(runId)).toEqual([
      "ToolCallScheduled feed-1",
      "ToolResultReceived feed-1 succeeded",
    ]);
  });

  it("fetches a feed by URL and serves a repeat from the cache without refetching", async () => {
    const input = { action: "fetch", url: `${base}/releases.atom`, limit: 2 };
    const first = await call(system.runId(), input, "atom-1");
    expect(first.status).toBe("succeeded");
    expect(first.result.data?.feed.format).toBe("atom");
    expect(first.result.data?.items.map((i) => i.title)).toEqual(["v2.3.0", "v2.2.0 stable"]);
    const fetched = hits.filter((h) => h === "/releases.atom").length;
    const second = await call(system.runId(), input, "atom-2");
    expect(second.result.cached).toBe(true);
    expect(second.result.data).toEqual(first.result.data);
    expect(hits.filter((h) => h === "/releases.atom").length).toBe(fetched);
  });

  it("fails rate_limited with retryAfterMs when the feed answers 429, as a result", async () => {
    const runId = system.runId();
    const view = await call(runId, { action: "fetch", url: `${base}/busy.xml` }, "busy-1");
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "rate_limited", retryAfterMs: 90_000 });
    expect(await eventsOf(runId)).toEqual([
      "ToolCallScheduled busy-1",
      "ToolResultReceived busy-1 failed",
    ]);
  });

  it("fails upstream_error for a page that is not a feed", async () => {
    const view = await call(
      system.runId(),
      { action: "fetch", url: `${base}/index.html` },
      "html-1",
    );
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({
      kind: "upstream_error",
      message: `The feed at ${base}/index.html is not an RSS or Atom feed.`,
      recovery: "correct_call",
    });
  });

  it("fails unavailable when the URL is a private address the stage may not reach", async () => {
    const view = await call(
      system.runId(),
      { action: "fetch", url: "http://169.254.169.254/latest/meta-data/" },
      "ssrf-1",
    );
    expect(view.status).toBe("failed");
    expect(view.result.failure?.kind).toBe("unavailable");
  });
});

describe("rss_feed on a stage without a configured feed", () => {
  let bare: TestToolbus;
  beforeAll(async () => {
    bare = await startTestToolbus({
      tools: [...builtinTools.filter((t) => t.spec.id !== rssFeed.spec.id), rssFeed],
      toolsets: [...builtinToolsets.filter((t) => t.name !== rssFeedToolset.name), rssFeedToolset],
      config: { outbound: { allowHosts: ["127.0.0.1"] } },
    });
  });
  afterAll(() => bare?.stop());

  it("answers get_configured with unavailable and replan", async () => {
    const response = await bare.request(`/v1/runs/${bare.runId()}/calls`, {
      method: "POST",
      json: { tool: "rss_feed", input: { action: "get_configured" }, wait: 15 },
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({
      kind: "unavailable",
      message: expect.stringMatching(/no feed is configured on this stage/i),
      recovery: "replan",
    });
  });
});
