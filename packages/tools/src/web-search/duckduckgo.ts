import { Failures } from "@toolbus/core/model";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { classesOf, collapseWhitespace, decodeEntities, tokenizeHtml } from "./html";
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

const BREAKS = new Set(["br", "p", "div", "li"]);

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
    if (capture && current) {
      current[capture.field] = collapseWhitespace(decodeEntities(capture.parts.join("")));
    }
    capture = undefined;
  };

  for (const token of tokenizeHtml(html)) {
    if (token.type === "text") {
      capture?.parts.push(token.text);
      continue;
    }
    if (token.type === "close") {
      if (capture && token.name === capture.element && --capture.depth === 0) finish();
      continue;
    }
    const classes = classesOf(token.attrs);
    if (
      classes.some((c) => c.startsWith("anomaly-modal")) ||
      token.attrs.get("id") === "challenge-form"
    ) {
      challenge = true;
    }
    if (classes.includes("no-results") || token.attrs.get("id") === "links") recognized = true;
    if (token.name === "div" && classes.includes("result")) {
      // Results are siblings: a new one ends the previous even if the page left it open.
      finish();
      recognized = true;
      current = { ad: classes.includes("result--ad") };
      entries.push(current);
      continue;
    }
    if (capture) {
      if (token.name === capture.element && !token.selfClosing) capture.depth++;
      // Inline markup (<b>) joins words; a line break or block separates them.
      if (BREAKS.has(token.name)) capture.parts.push(" ");
      continue;
    }
    if (!current || token.selfClosing) continue;
    if (token.name === "a" && classes.includes("result__a") && current.title === undefined) {
      current.href = token.attrs.get("href") ?? "";
      capture = { field: "title", element: "a", depth: 1, parts: [] };
    } else if (classes.includes("result__snippet") && current.snippet === undefined) {
      capture = { field: "snippet", element: token.name, depth: 1, parts: [] };
    }
  }
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
      const page = parseDuckDuckGoHtml(response.text(), response.url);
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
