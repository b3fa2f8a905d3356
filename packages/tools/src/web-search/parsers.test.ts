import { describe, expect, it } from "vitest";
import { parseBraveResponse } from "./brave";
import { parseDuckDuckGoHtml, unwrapRedirect } from "./duckduckgo";
import { parseSearxngResponse, searxngSearchUrl } from "./searxng";
import { fixture } from "./testing";

const PAGE_URL = "https://html.duckduckgo.com/html/";

describe("parseDuckDuckGoHtml", () => {
  const page = parseDuckDuckGoHtml(fixture("web_search", "duckduckgo-results.html"), PAGE_URL);

  it("reads organic results in page order, unwrapping DuckDuckGo's redirect links", () => {
    expect(page.recognized).toBe(true);
    expect(page.challenge).toBe(false);
    expect(page.results.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://www.totaltypescript.com/tutorials/zod",
      "https://zod.dev/#introduction",
      "javascript:alert(document.cookie)",
      "https://www.npmjs.com/package/zod",
      "https://blog.logrocket.com/schema-validation-typescript-zod/",
    ]);
  });

  it("leaves out ads and what scripts contain", () => {
    const text = JSON.stringify(page.results);
    expect(text).not.toContain("validator.example");
    expect(text).not.toContain("script.example");
  });

  it("gives titles and snippets as plain text with entities decoded", () => {
    expect(page.results[0]).toEqual({
      title: "Zod | TypeScript-first schema validation with static type inference",
      url: "https://zod.dev/",
      snippet:
        "Zod is a TypeScript-first validation library. Using Zod, you can define schemas you " +
        "can use to validate data, from a simple string to a complex nested object.",
    });
    expect(page.results[2]).toMatchObject({
      title: "Zod Tutorial 'Total TypeScript' & friends",
      snippet: "Learn how to use Zod to validate user input – ten interactive exercises <free>.",
    });
  });

  it("reads snippets in a div as well as in a link, and leaves a missing snippet empty", () => {
    expect(page.results[5]).toEqual({
      title: "zod - npm",
      url: "https://www.npmjs.com/package/zod",
      snippet: "",
    });
    expect(page.results[6]?.snippet).toBe(
      "Oct 12, 2023 · Zod is a TypeScript-first schema declaration and validation library. " +
        "It works in Node.js and all modern browsers.",
    );
  });

  it("recognizes a page without results as an answer, not as garbage", () => {
    const empty = parseDuckDuckGoHtml(
      fixture("web_search", "duckduckgo-no-results.html"),
      PAGE_URL,
    );
    expect(empty).toEqual({ results: [], recognized: true, challenge: false });
  });

  it("recognizes the bot check", () => {
    const check = parseDuckDuckGoHtml(fixture("web_search", "duckduckgo-challenge.html"), PAGE_URL);
    expect(check.challenge).toBe(true);
    expect(check.results).toEqual([]);
  });

  it("does not recognize pages of another structure", () => {
    for (const html of ["", "<html><body><h1>Service Unavailable</h1></body></html>", "{}"]) {
      expect(parseDuckDuckGoHtml(html, PAGE_URL).recognized).toBe(false);
    }
  });

  it("survives results the page left unclosed", () => {
    const html =
      '<div id="links" class="results"><div class="result"><a class="result__a" href="https://a.example/">A' +
      '<div class="result"><a class="result__a" href="https://b.example/">B</a>' +
      '<a class="result__snippet">about <b>B</b></a>';
    const { results } = parseDuckDuckGoHtml(html, PAGE_URL);
    expect(results).toEqual([
      { title: "A", url: "https://a.example/", snippet: "" },
      { title: "B", url: "https://b.example/", snippet: "about B" },
    ]);
  });
});

describe("unwrapRedirect", () => {
  it("takes the uddg target from protocol-relative and absolute redirect links", () => {
    const href = "//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1%26c%3D2&rut=x";
    expect(unwrapRedirect(href, PAGE_URL)).toBe("https://example.org/a?b=1&c=2");
    expect(unwrapRedirect(`https:${href}`, "http://127.0.0.1:1234/html/")).toBe(
      "https://example.org/a?b=1&c=2",
    );
  });

  it("drops ad links and redirects without a target, keeps direct links", () => {
    expect(unwrapRedirect("https://duckduckgo.com/y.js?ad_domain=x.example", PAGE_URL)).toBe(
      undefined,
    );
    expect(unwrapRedirect("//duckduckgo.com/l/?rut=x", PAGE_URL)).toBe(undefined);
    expect(unwrapRedirect("https://example.org/page", PAGE_URL)).toBe("https://example.org/page");
  });
});

describe("parseBraveResponse", () => {
  it("reads web.results with markup removed, skipping entries without a URL", () => {
    const results = parseBraveResponse(JSON.parse(fixture("web_search", "brave-results.json")));
    expect(results?.map((r) => r.url)).toEqual([
      "https://zod.dev/",
      "https://github.com/colinhacks/zod",
      "https://zod.dev",
      "https://www.totaltypescript.com/tutorials/zod",
    ]);
    expect(results?.[0]).toEqual({
      title: "Zod | TypeScript-first schema validation",
      url: "https://zod.dev/",
      snippet:
        "Zod is a TypeScript-first validation library. Define a schema and parse some data " +
        "with it. You'll get back a strongly typed, validated result.",
    });
  });

  it("reads an answer without a web section as no results", () => {
    expect(parseBraveResponse({ type: "search", query: { original: "x" } })).toEqual([]);
  });

  it("refuses bodies of another shape", () => {
    expect(parseBraveResponse([])).toBeUndefined();
    expect(parseBraveResponse({ web: { results: "none" } })).toBeUndefined();
    expect(parseBraveResponse(null)).toBeUndefined();
  });
});

describe("parseSearxngResponse", () => {
  it("reads results with title, url and content", () => {
    const results = parseSearxngResponse(JSON.parse(fixture("web_search", "searxng-results.json")));
    expect(results).toHaveLength(4);
    expect(results?.[1]).toEqual({
      title:
        "GitHub - colinhacks/zod: TypeScript-first schema validation with static type inference",
      url: "https://github.com/colinhacks/zod",
      snippet:
        "TypeScript-first schema validation with static type inference. Contribute to " +
        "colinhacks/zod development by creating an account on GitHub.",
    });
    expect(results?.[3]?.snippet).toBe("");
  });

  it("refuses bodies without a results list", () => {
    expect(parseSearxngResponse({ query: "x" })).toBeUndefined();
    expect(parseSearxngResponse("results")).toBeUndefined();
  });

  it("builds the search URL under a base with or without a path", () => {
    expect(searxngSearchUrl("https://searx.example.org").href).toBe(
      "https://searx.example.org/search",
    );
    expect(searxngSearchUrl("https://example.org/searx").href).toBe(
      "https://example.org/searx/search",
    );
    expect(searxngSearchUrl("https://example.org/searx/?x=1").href).toBe(
      "https://example.org/searx/search",
    );
  });
});
