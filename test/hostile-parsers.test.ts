import type { ServerResponse } from "node:http";
import { startUpstream, testToolContext, type Upstream } from "@toolbus/core/testing";
import type { AnyToolDefinition } from "@toolbus/core/tool-definition";
import { calendar, calendarSettings } from "@toolbus/tools/calendar";
import { readabilityAnalyzer } from "@toolbus/tools/readability";
import { rssFeed, rssFeedSettings } from "@toolbus/tools/rss-feed";
import { webSearch, webSearchSettings } from "@toolbus/tools/web-search";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectCleanOutcome,
  type HostileCase,
  hostileHtml,
  hostileIcs,
  hostileText,
  hostileXml,
} from "./support/hostile-parsers";

/**
 * Every tool that parses what an upstream or a caller wrote reads the hostile corpus and
 * ends with a clean result or a clean tool failure: never a thrown Error, never a hang (each
 * case runs under the test timeout, far above what a linear parser needs for these sizes).
 */

/** What the loopback upstream serves next: one body per request path. */
const bodies = new Map<string, { type: string; body: Buffer | string }>();
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream((request, response: ServerResponse) => {
    const answer = bodies.get(request.url.pathname);
    response.writeHead(answer ? 200 : 404, { "content-type": answer?.type ?? "text/plain" });
    response.end(answer?.body ?? "");
  });
});
afterAll(() => upstream.close());

function serve(path: string, type: string, body: Buffer | string): string {
  bodies.set(path, { type, body });
  return `${upstream.origin}${path}`;
}

function context<S>(settings: S) {
  return testToolContext(settings, {
    outbound: {
      userAgent: "test",
      allowHosts: ["127.0.0.1"],
      defaultTimeoutMs: 10_000,
      defaultMaxBytes: 8 * 1024 * 1024,
      networkEnabled: true,
    },
    secrets: { SEARCH_API_KEY: "hostile-test-key" },
  });
}

/** Runs the tool on `input` if its schema accepts it; a refused input is a clean 400. */
function replay(tool: AnyToolDefinition, input: unknown, settings: unknown) {
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) return Promise.resolve("refused");
  return expectCleanOutcome(tool, tool.execute(parsed.data, context(settings)));
}

const named = (cases: HostileCase[]) => cases.map((c) => [c.name, c] as const);

/** Characters XML text cannot hold as written. */
function escapeXml(text: string): string {
  return text.replace(/[<>&]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;" })[c] ?? c);
}

describe("rss_feed reads the hostile corpus cleanly", () => {
  const settings = rssFeedSettings.parse({});

  it.each(named(hostileXml()))("as the feed: %s", async (_, hostile) => {
    const url = serve("/feed.xml", "application/xml", hostile.body);
    expect(await replay(rssFeed, { action: "fetch", url }, settings)).toMatch(
      /^(result|upstream_error)$/,
    );
  });

  it.each(named(hostileHtml()))("as an item's HTML summary: %s", async (_, hostile) => {
    const html = escapeXml(hostile.body.toString("utf8"));
    const feed = `<rss><channel><title>T</title><item><title>x</title><description>${html}</description></item></channel></rss>`;
    const url = serve("/summary.xml", "application/rss+xml; charset=utf-8", feed);
    expect(await replay(rssFeed, { action: "fetch", url }, settings)).toMatch(
      /^(result|upstream_error)$/,
    );
  });
});

describe("web_search reads the hostile corpus cleanly", () => {
  it.each(named(hostileHtml()))("as DuckDuckGo's page: %s", async (_, hostile) => {
    const duckduckgoUrl = serve("/html/", "text/html", hostile.body);
    const settings = webSearchSettings.parse({ duckduckgoUrl });
    // A page that is not a results page is an unreadable answer, which is a clean failure.
    expect(await replay(webSearch, { query: "hostile" }, settings)).toMatch(
      /^(result|upstream_error)$/,
    );
  });

  it.each(hostileText().map((c) => [c.name, c.text] as const))(
    "as Brave's titles and descriptions: %s",
    async (_, text) => {
      const result = { title: text, url: "https://a.example/", description: text };
      const braveUrl = serve(
        "/brave",
        "application/json",
        JSON.stringify({ web: { results: [result] } }),
      );
      const settings = webSearchSettings.parse({ provider: "brave", braveUrl });
      expect(await replay(webSearch, { query: "hostile" }, settings)).toBe("result");
    },
  );
});

describe("calendar reads the hostile corpus cleanly", () => {
  it.each(named(hostileIcs()))("as an ICS feed: %s", async (_, hostile) => {
    const url = serve("/feed.ics", "text/calendar", hostile.body);
    const settings = calendarSettings.parse({ icsUrls: [url] });
    const input = { time_min: "2026-01-01T00:00:00Z", time_max: "2026-03-01T00:00:00Z" };
    // A feed that is not a calendar is its only source failing: an upstream error.
    expect(await replay(calendar, input, settings)).toMatch(/^(result|upstream_error)$/);
  });
});

describe("readability_analyzer reads hostile caller text cleanly", () => {
  it.each(hostileText().map((c) => [c.name, c.text] as const))("%s", async (_, text) => {
    expect(await replay(readabilityAnalyzer, { text }, undefined)).toMatch(/^(result|refused)$/);
  });
});
