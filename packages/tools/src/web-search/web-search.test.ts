import type { ServerResponse } from "node:http";
import { ToolFailure, toolSpecOf } from "@toolbus/core/tool-definition";
import type { Failure } from "@toolbus/wire/model";
import { toolSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type WebSearchSettings, webSearchSettings } from "./settings";
import {
  fixture,
  loopbackContext,
  type Route,
  sendHtml,
  sendJson,
  startUpstream,
  type Upstream,
} from "./testing";
import { cleanResults, webSearch, webSearchInput, webSearchOutput } from "./web-search";

const BRAVE_KEY = "brave-key-7f3c9a1e5d";

let upstream: Upstream;
let route: Route;

beforeAll(async () => {
  upstream = await startUpstream((request, response) => route(request, response));
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.requests.length = 0;
  route = (_, response) => sendJson(response, { error: "no route" }, 404);
});

function settings(overrides: Record<string, unknown> = {}): WebSearchSettings {
  return webSearchSettings.parse({
    duckduckgoUrl: `${upstream.origin}/html/`,
    braveUrl: `${upstream.origin}/res/v1/web/search`,
    searxngUrl: `${upstream.origin}/searx/`,
    ...overrides,
  });
}

async function search(
  input: unknown,
  overrides: Record<string, unknown> = {},
  options: Parameters<typeof loopbackContext>[1] = { secrets: { SEARCH_API_KEY: BRAVE_KEY } },
) {
  return webSearch.execute(
    webSearchInput.parse(input),
    loopbackContext(settings(overrides), options),
  );
}

async function failureOf(run: Promise<unknown>): Promise<Failure> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ToolFailure) {
      // Everything a failure could show anyone: the message, the failure and its cause.
      const shown = JSON.stringify({ error, failure: error.failure, cause: String(error.cause) });
      expect(shown).not.toContain(BRAVE_KEY);
      return error.failure;
    }
    throw error;
  }
  throw new Error("expected the call to fail");
}

describe("web_search with DuckDuckGo (the default)", () => {
  beforeEach(() => {
    route = (request, response) =>
      request.url.pathname === "/html/"
        ? sendHtml(response, fixture("web_search", "duckduckgo-results.html"))
        : sendJson(response, {}, 404);
  });

  it("posts the query like the page's own form and returns clean, de-duplicated results", async () => {
    const { data, citations, output } = await search({ query: "typescript zod", max_results: 10 });
    expect(upstream.requests).toHaveLength(1);
    const [request] = upstream.requests;
    expect(request?.method).toBe("POST");
    expect(request?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ q: "typescript zod" });
    expect(data.provider).toBe("duckduckgo");
    expect(data.query).toBe("typescript zod");
    // The #introduction link is the first page again; the javascript: link is no web page.
    expect(data.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://www.totaltypescript.com/tutorials/zod",
      "https://www.npmjs.com/package/zod",
      "https://blog.logrocket.com/schema-validation-typescript-zod/",
    ]);
    expect(citations).toHaveLength(5);
    expect(citations?.[0]).toEqual({
      title: "Zod | TypeScript-first schema validation with static type inference",
      url: "https://zod.dev/",
      snippet: data.results[0]?.snippet,
    });
    expect(citations?.[3]).toEqual({
      title: "zod - npm",
      url: "https://www.npmjs.com/package/zod",
    });
    expect(output).toMatch(
      /^Web results for "typescript zod" from DuckDuckGo \(any time\), 5 results:\n\n1\. \[Zod/,
    );
    expect(output).toContain("4. [zod - npm](https://www.npmjs.com/package/zod)\n5. [");
    expect(webSearchOutput.safeParse(data).success).toBe(true);
  });

  it("returns at most max_results, five by default", async () => {
    expect((await search({ query: "zod" })).data.results).toHaveLength(5);
    const { data, citations } = await search({ query: "zod", max_results: 2 });
    expect(data.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
    ]);
    expect(citations).toHaveLength(2);
  });

  it.each([
    ["day", "d"],
    ["week", "w"],
    ["month", "m"],
    ["year", "y"],
  ])("asks for results from the past %s with df=%s", async (recency, df) => {
    const { output } = await search({ query: "zod release", recency });
    expect(new URLSearchParams(upstream.requests[0]?.body).get("df")).toBe(df);
    expect(output).toContain(`(past ${recency})`);
  });

  it("succeeds with no results and suggests what to change", async () => {
    route = (_, response) =>
      sendHtml(response, fixture("web_search", "duckduckgo-no-results.html"));
    const result = await search({ query: "qwxzvbnmplk asdfghjkl", recency: "week" });
    expect(result.data).toEqual({
      query: "qwxzvbnmplk asdfghjkl",
      provider: "duckduckgo",
      results: [],
    });
    expect(result.citations).toEqual([]);
    expect(result.output).toBe(
      'No web results for "qwxzvbnmplk asdfghjkl" from DuckDuckGo (past week). Try fewer or ' +
        "different words, or a wider recency.",
    );
  });

  it("fails as rate limited when DuckDuckGo answers with its bot check", async () => {
    route = (_, response) =>
      sendHtml(response, fixture("web_search", "duckduckgo-challenge.html"), 202);
    const failure = await failureOf(search({ query: "zod" }));
    expect(failure).toMatchObject({ kind: "rate_limited", retryable: true, recovery: "replan" });
    expect(failure.message).toMatch(/bot check/);
  });

  it("fails as unreadable when the page is not a results page", async () => {
    route = (_, response) => sendHtml(response, "<html><body><h1>Hello</h1></body></html>");
    expect(await failureOf(search({ query: "zod" }))).toEqual({
      kind: "upstream_error",
      message: "DuckDuckGo returned a response Toolbus could not read.",
      retryable: true,
      recovery: "replan",
    });
  });
});

/** A DuckDuckGo results page with one result, its text as given (already encoded). */
function resultPage(title: string, snippet: string, head = ""): string {
  return (
    `<html><head>${head}</head><body><div id="links">` +
    `<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2F">${title}</a>` +
    `<a class="result__snippet" href="#">${snippet}</a></div></div></body></html>`
  );
}

function sendBytes(response: ServerResponse, contentType: string, body: Uint8Array): void {
  response.writeHead(200, { "content-type": contentType });
  response.end(body);
}

describe("web_search reading DuckDuckGo pages as written", () => {
  it("decodes every HTML named reference, not only a short list", async () => {
    route = (_, response) =>
      sendHtml(response, resultPage("Caf&eacute; &amp; cr&egrave;me", "&frac12; price &rarr; now"));
    const { data } = await search({ query: "cafe" });
    expect(data.results[0]).toMatchObject({ title: "Café & crème", snippet: "½ price → now" });
  });

  it("reads a tag with a quote left open as markup, not as snippet text", async () => {
    route = (_, response) =>
      sendHtml(response, resultPage("Quotes", `kept <b title="never closed>lost</b> words`));
    const { data } = await search({ query: "quotes" });
    expect(data.results[0]?.title).toBe("Quotes");
    expect(data.results[0]?.snippet).toBe("kept");
  });

  it.each([
    // "日本語" in Shift_JIS, named by the content-type header.
    [
      "Shift_JIS",
      "text/html; charset=Shift_JIS",
      "",
      [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea],
      "日本語",
    ],
    // "Привет" in windows-1251, named only by the page's <meta charset>.
    [
      "windows-1251",
      "text/html",
      '<meta charset="windows-1251">',
      [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2],
      "Привет",
    ],
  ])("reads a page in the %s it declares", async (_, type, head, bytes, text) => {
    const [before, after] = resultPage("@", "snippet", head).split("@");
    route = (_, response) =>
      sendBytes(
        response,
        type,
        Buffer.concat([Buffer.from(before ?? ""), Buffer.from(bytes), Buffer.from(after ?? "")]),
      );
    const { data } = await search({ query: "charset" });
    expect(data.results[0]?.title).toBe(text);
  });
});

describe("web_search with Brave Search", () => {
  beforeEach(() => {
    route = (request, response) =>
      request.url.pathname === "/res/v1/web/search"
        ? sendJson(response, fixture("web_search", "brave-results.json"))
        : sendJson(response, {}, 404);
  });

  it("sends the key as X-Subscription-Token with count and freshness, and reads web.results", async () => {
    const { data, output } = await search(
      { query: "typescript zod", max_results: 3, recency: "month" },
      { provider: "brave" },
    );
    const request = upstream.requests[0];
    expect(request?.method).toBe("GET");
    expect(request?.headers["x-subscription-token"]).toBe(BRAVE_KEY);
    expect(Object.fromEntries(request?.url.searchParams ?? [])).toEqual({
      q: "typescript zod",
      count: "6",
      freshness: "pm",
    });
    expect(data.provider).toBe("brave");
    // https://zod.dev and https://zod.dev/ are one page.
    expect(data.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://www.totaltypescript.com/tutorials/zod",
    ]);
    expect(data.results[0]?.title).toBe("Zod | TypeScript-first schema validation");
    expect(output).toContain("from Brave Search (past month)");
    expect(output).not.toContain(BRAVE_KEY);
  });

  it("fails as unavailable, naming the setting and the secret, when SEARCH_API_KEY is missing", async () => {
    const failure = await failureOf(
      search({ query: "zod" }, { provider: "brave" }, { secrets: {} }),
    );
    expect(failure).toMatchObject({ kind: "unavailable", retryable: false, recovery: "replan" });
    expect(failure.message).toContain('tools.web_search.provider = "brave"');
    expect(failure.message).toContain("SEARCH_API_KEY");
    expect(upstream.requests).toHaveLength(0);
  });

  it("fails as unavailable when Brave refuses the key, without repeating it", async () => {
    route = (_, response) =>
      sendJson(
        response,
        { type: "ErrorResponse", error: { code: "SUBSCRIPTION_TOKEN_INVALID", status: 401 } },
        401,
      );
    const failure = await failureOf(search({ query: "zod" }, { provider: "brave" }));
    expect(failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
  });

  it("fails as unreadable on a JSON body of another shape", async () => {
    route = (_, response) => sendJson(response, { web: { results: "soon" } });
    const failure = await failureOf(search({ query: "zod" }, { provider: "brave" }));
    expect(failure.message).toBe("Brave Search returned a response Toolbus could not read.");
  });
});

describe("web_search with SearXNG", () => {
  beforeEach(() => {
    route = (request, response) =>
      request.url.pathname === "/searx/search"
        ? sendJson(response, fixture("web_search", "searxng-results.json"))
        : sendJson(response, {}, 404);
  });

  it("asks the instance for JSON with a time range and keeps only web links", async () => {
    const { data } = await search(
      { query: "typescript zod", recency: "year" },
      { provider: "searxng" },
    );
    expect(Object.fromEntries(upstream.requests[0]?.url.searchParams ?? [])).toEqual({
      q: "typescript zod",
      format: "json",
      time_range: "year",
    });
    expect(data).toMatchObject({ provider: "searxng" });
    expect(data.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://www.npmjs.com/package/zod",
    ]);
  });

  it("leaves out time_range for any time", async () => {
    await search({ query: "zod" }, { provider: "searxng" });
    expect(upstream.requests[0]?.url.searchParams.has("time_range")).toBe(false);
  });

  it("explains a 403 as JSON output being switched off on the instance", async () => {
    route = (_, response) => sendHtml(response, "<h1>403 Forbidden</h1>", 403);
    const failure = await failureOf(search({ query: "zod" }, { provider: "searxng" }));
    expect(failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(failure.message).toContain("search.formats");
  });

  it("fails as unreadable when the body is not JSON", async () => {
    route = (_, response) => sendJson(response, "<html>not json</html>");
    const failure = await failureOf(search({ query: "zod" }, { provider: "searxng" }));
    expect(failure.message).toBe("SearXNG returned a response Toolbus could not read.");
  });
});

describe("web_search when the upstream misbehaves", () => {
  const providers = [
    ["duckduckgo", "/html/"],
    ["brave", "/res/v1/web/search"],
    ["searxng", "/searx/search"],
  ] as const;

  it.each(providers)("%s: a server that never answers is a timeout", async (provider) => {
    route = () => undefined;
    const failure = await failureOf(
      search(
        { query: "zod" },
        { provider },
        {
          secrets: { SEARCH_API_KEY: BRAVE_KEY },
          outbound: { defaultTimeoutMs: 200 },
        },
      ),
    );
    expect(failure).toMatchObject({ kind: "timeout", retryable: true, recovery: "replan" });
  });

  it("stops as soon as the tool's own timeout fires", async () => {
    route = () => undefined;
    const started = Date.now();
    const failure = await failureOf(
      search({ query: "zod" }, {}, { signal: AbortSignal.timeout(150) }),
    );
    expect(failure.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it.each(providers)("%s: a 500 is an upstream error worth retrying later", async (provider) => {
    route = (_, response) => sendHtml(response, "<h1>Internal Server Error</h1>", 500);
    const failure = await failureOf(search({ query: "zod" }, { provider }));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: true, recovery: "replan" });
    expect(upstream.requests.length).toBe(3); // the client's two retries
  });

  it.each(providers)("%s: a 429 is rate limited with Retry-After", async (provider) => {
    route = (_, response) => {
      response.writeHead(429, { "retry-after": "120", "content-type": "text/plain" });
      response.end("slow down");
    };
    const failure = await failureOf(search({ query: "zod" }, { provider }));
    expect(failure).toMatchObject({ kind: "rate_limited", retryAfterMs: 120_000, retryable: true });
  });

  it.each(providers)("%s: a body over the size cap is refused", async (provider) => {
    route = (_, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`{"results":[],"pad":"${"x".repeat(2 * 1024 * 1024)}"}`);
    };
    const failure = await failureOf(search({ query: "zod" }, { provider }));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: false });
    expect(failure.message).toMatch(/larger than allowed/);
  });

  const following = providers.filter(([provider]) => provider !== "brave");

  it.each(following)("%s: a redirect loop ends as an upstream error", async (provider, path) => {
    route = (_, response) => {
      response.writeHead(302, { location: `${path}?hop=${upstream.requests.length}` });
      response.end();
    };
    const failure = await failureOf(search({ query: "zod" }, { provider }));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: false });
    expect(failure.message).toMatch(/redirected too many times/);
  });

  it.each(following)("%s: a redirect to a private address is refused", async (provider) => {
    route = (_, response) => {
      response.writeHead(302, { location: "http://10.0.0.1/search" });
      response.end();
    };
    const failure = await failureOf(search({ query: "zod" }, { provider }));
    expect(failure).toMatchObject({ kind: "unavailable", retryable: false, recovery: "replan" });
    expect(upstream.requests).toHaveLength(1);
  });

  it.each([
    ["a redirect loop", "/res/v1/web/search"],
    ["a private address", "http://10.0.0.1/search"],
    ["another origin", "http://localhost:1/steal"],
  ])(
    "brave: follows no redirect, to %s or anywhere, so the key stays with Brave",
    async (_, location) => {
      route = (_, response) => {
        response.writeHead(302, { location });
        response.end();
      };
      const failure = await failureOf(search({ query: "zod" }, { provider: "brave" }));
      expect(failure).toMatchObject({
        kind: "upstream_error",
        retryable: false,
        recovery: "replan",
      });
      expect(failure.message).toBe(
        "Brave Search answered with a redirect (302), which Toolbus does not follow with the API key.",
      );
      expect(upstream.requests).toHaveLength(1);
    },
  );
});

describe("cleanResults", () => {
  it("keeps http(s) URLs without credentials, once each, and fills empty titles", () => {
    const results = cleanResults(
      [
        { title: " A ", url: "https://a.example/x/", snippet: " one " },
        { title: "A again", url: "http://a.example/x#top", snippet: "" },
        { title: "B", url: "https://user:pw@b.example/", snippet: "" },
        { title: "C", url: "mailto:c@c.example", snippet: "" },
        { title: "D", url: "not a url", snippet: "" },
        { title: "", url: "https://e.example/page?q=1", snippet: "" },
        { title: "F", url: `https://f.example/${"x".repeat(2100)}`, snippet: "" },
      ],
      10,
    );
    expect(results).toEqual([
      { title: "A", url: "https://a.example/x/", snippet: "one" },
      { title: "e.example", url: "https://e.example/page?q=1", snippet: "" },
    ]);
  });

  it("shortens very long titles and snippets", () => {
    const [result] = cleanResults(
      [{ title: "t".repeat(500), url: "https://a.example/", snippet: "s".repeat(5000) }],
      1,
    );
    expect(result?.title).toHaveLength(300);
    expect(result?.snippet).toHaveLength(1000);
    expect(result?.snippet.endsWith("…")).toBe(true);
  });
});

describe("settings schema", () => {
  it("defaults to DuckDuckGo's and Brave's public endpoints", () => {
    expect(webSearchSettings.parse({})).toEqual({
      provider: "duckduckgo",
      duckduckgoUrl: "https://html.duckduckgo.com/html/",
      braveUrl: "https://api.search.brave.com/res/v1/web/search",
    });
  });

  it("requires searxngUrl when the provider is searxng", () => {
    const result = webSearchSettings.safeParse({ provider: "searxng" });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ["searxngUrl"],
      message: "searxngUrl is required when provider is searxng",
    });
    expect(
      webSearchSettings.safeParse({ provider: "searxng", searxngUrl: "https://searx.example.org" })
        .success,
    ).toBe(true);
  });

  it("rejects unknown providers, non-web URLs and unknown fields", () => {
    for (const bad of [
      { provider: "google" },
      { duckduckgoUrl: "ftp://html.duckduckgo.com/html/" },
      { braveUrl: "not a url" },
      { apiKey: "x" },
    ]) {
      expect(webSearchSettings.safeParse(bad).success).toBe(false);
    }
  });
});

describe("input schema", () => {
  it("defaults max_results to 5 and recency to any, and trims the query", () => {
    expect(webSearchInput.parse({ query: "  zod  " })).toEqual({
      query: "zod",
      max_results: 5,
      recency: "any",
    });
  });

  it("rejects empty or long queries, out-of-range counts, unknown recencies and fields", () => {
    for (const bad of [
      {},
      { query: "   " },
      { query: "q".repeat(401) },
      { query: "zod", max_results: 0 },
      { query: "zod", max_results: 11 },
      { query: "zod", max_results: 2.5 },
      { query: "zod", recency: "hour" },
      { query: "zod", page: 2 },
    ]) {
      expect(webSearchInput.safeParse(bad).success).toBe(false);
    }
  });

  it("accepts every example in the spec", () => {
    const examples = webSearch.spec.examples ?? [];
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      expect(webSearchInput.safeParse(example.input).success).toBe(true);
    }
  });
});

it("publishes a valid catalog spec", () => {
  const spec = toolSpecOf(webSearch);
  expect(toolSpec.parse(spec)).toEqual(spec);
  expect(spec).toMatchObject({
    id: "web_search",
    toolset: "web_search",
    category: "research",
    optionality: "optional",
    requires: ["network"],
    fallback: "static_links",
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    cache: {
      ttlSeconds: 900,
      keyFields: ["query", "max_results", "recency"],
      staleIfErrorSeconds: 86_400,
    },
    version: "1",
  });
  expect(spec.guidelines.do.length).toBeGreaterThanOrEqual(3);
  expect(spec.guidelines.dont.length).toBeGreaterThanOrEqual(3);
  expect(spec.setup.map((s) => s.name)).toContain("SEARCH_API_KEY");
  expect(spec.inputSchema).toMatchObject({
    type: "object",
    required: ["query"],
    properties: {
      max_results: { type: "integer", minimum: 1, maximum: 10, default: 5 },
      recency: { enum: ["day", "week", "month", "year", "any"], default: "any" },
    },
  });
});
