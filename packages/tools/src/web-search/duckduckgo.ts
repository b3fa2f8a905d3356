import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";
import { decodeDocument } from "../text/charset";
import { breaksWords, collapseWhitespace, readHtml } from "../text/html";
import {
  type RawSearchResult,
  type Recency,
  requestUpstream,
  type SearchProvider,
  unreadable,
} from "./provider";

const LABEL = "DuckDuckGo";

/** DuckDuckGo's `df` form field: results from the past day, week, month or year. */
const DATE_FILTER: Record<Recency, string | undefined> = {
  day: "d",
  week: "w",
  month: "m",
  year: "y",
  any: undefined,
};

/** What the HTML endpoint's page says, read without a browser. */
export interface DuckDuckGoPage {
  /** Organic results in page order; ads are left out. */
  results: RawSearchResult[];
  /** The page has the structure of a results page (with or without results). */
  recognized: boolean;
  /** DuckDuckGo answered with its bot check instead of results. */
  challenge: boolean;
}

/**
 * Reads a page of https://html.duckduckgo.com/html/. Each result is a `div.result`
 * (`result--ad` for ads) holding an `a.result__a` title link and a `.result__snippet`;
 * links point at DuckDuckGo's redirector `//duckduckgo.com/l/?uddg=<target>`, which is
 * unwrapped here. `pageUrl` resolves the protocol-relative links.
 */
export function parseDuckDuckGoHtml(html: string, pageUrl: string): DuckDuckGoPage {
  interface Entry {
    ad: boolean;
    href?: string;
    title?: string;
    snippet?: string;
  }
  interface Capture {
    field: "title" | "snippet";
    element: string;
    depth: number;
    parts: string[];
  }
  const entries: Entry[] = [];
  let current: Entry | undefined;
  let capture: Capture | undefined;
  let recognized = false;
  let challenge = false;

  const finish = () => {
    if (capture && current) current[capture.field] = collapseWhitespace(capture.parts.join(""));
    capture = undefined;
  };

  // htmlparser2 balances the page's tags (implied closes included) and decodes references in
  // text and attributes, in one pass whatever the page's quotes and tags look like.
  readHtml(html, {
    ontext(text) {
      capture?.parts.push(text);
    },
    onclosetag(name) {
      if (capture && name === capture.element && --capture.depth === 0) finish();
      else if (capture && breaksWords(name)) capture.parts.push(" ");
    },
    onopentag(name, attrs) {
      const classes = (attrs.class ?? "").split(/\s+/).filter((c) => c !== "");
      if (classes.some((c) => c.startsWith("anomaly-modal")) || attrs.id === "challenge-form") {
        challenge = true;
      }
      if (classes.includes("no-results") || attrs.id === "links") recognized = true;
      if (name === "div" && classes.includes("result")) {
        // Results are siblings: a new one ends the previous even if the page left it open.
        finish();
        recognized = true;
        current = { ad: classes.includes("result--ad") };
        entries.push(current);
        return;
      }
      if (capture) {
        if (name === capture.element) capture.depth++;
        // Inline markup (<b>) joins words; a line break or block separates them.
        if (breaksWords(name)) capture.parts.push(" ");
        return;
      }
      if (!current) return;
      if (name === "a" && classes.includes("result__a") && current.title === undefined) {
        current.href = attrs.href ?? "";
        capture = { field: "title", element: "a", depth: 1, parts: [] };
      } else if (classes.includes("result__snippet") && current.snippet === undefined) {
        capture = { field: "snippet", element: name, depth: 1, parts: [] };
      }
    },
  });
  finish();

  const results: RawSearchResult[] = [];
  for (const entry of entries) {
    if (entry.ad || !entry.href || !entry.title) continue;
    const url = unwrapRedirect(entry.href, pageUrl);
    if (url === undefined) continue;
    results.push({ title: entry.title, url, snippet: entry.snippet ?? "" });
  }
  return { results, recognized, challenge };
}

/** The target of a result link: DuckDuckGo's `/l/?uddg=` redirector unwrapped. */
export function unwrapRedirect(href: string, pageUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href, pageUrl);
  } catch {
    return undefined;
  }
  const isDuckDuckGo =
    url.hostname === "duckduckgo.com" || url.hostname.endsWith(".duckduckgo.com");
  if (isDuckDuckGo) {
    // Ads go through /y.js and carry no clean target; everything else wraps it in uddg.
    if (url.pathname !== "/l/" && url.pathname !== "/l") return undefined;
    return url.searchParams.get("uddg") ?? undefined;
  }
  return url.href;
}

/** The default provider: DuckDuckGo's HTML endpoint, which needs no key. */
export function duckDuckGoProvider(endpoint: string): SearchProvider {
  return {
    name: "duckduckgo",
    label: LABEL,
    async search(query, options, context) {
      const form = new URLSearchParams({ q: query });
      const df = DATE_FILTER[options.recency];
      if (df) form.set("df", df);
      // The page's own form posts; a POST is what the endpoint expects from a client.
      const response = await requestUpstream(context, LABEL, endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "text/html",
        },
        body: form.toString(),
        retries: 2,
      });
      // The endpoint answers in UTF-8 today; a page in its declared charset reads either way.
      const html = decodeDocument(response.body, response.headers.get("content-type"), "html");
      const page = parseDuckDuckGoHtml(html, response.url);
      if (page.challenge) {
        throw new ToolFailure(
          Failures.rateLimited(
            "DuckDuckGo asked for a bot check instead of answering. Try again later, or " +
              "have the operator configure Brave Search or SearXNG for this stage.",
          ),
        );
      }
      if (!page.recognized) throw unreadable(LABEL);
      return page.results;
    },
  };
}
