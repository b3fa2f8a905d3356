import { networkCapability } from "@toolbus/core/capabilities";
import { loadFunctionSecrets } from "@toolbus/core/deployment";
import { createHttpClient } from "@toolbus/core/outbound";
import { defineTool } from "@toolbus/core/tool-definition";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import type { Citation } from "@toolbus/wire/model";
import * as z from "zod";
import { staticLinks } from "../static-links/static-links";
import {
  PROVIDERS,
  type RawSearchResult,
  RECENCIES,
  type Recency,
  SEARCH_API_KEY,
} from "./provider";
import { BRAVE_URL, DUCKDUCKGO_URL, webSearchSettings } from "./settings";

// The providers load with the first search and are kept.
const providers = onFirstUse(() => import("./providers"));

export const webSearchInput = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1)
    .max(400)
    .describe("What to search for, as you would type it into a search engine."),
  max_results: z.number().int().min(1).max(10).default(5).describe("Most results to return."),
  recency: z
    .enum(RECENCIES)
    .default("any")
    .describe("Only pages from the past day, week, month or year; any for no limit."),
});
export type WebSearchInput = z.infer<typeof webSearchInput>;

export const webSearchResult = z.object({
  title: z.string(),
  url: z.string().describe("An http or https URL."),
  snippet: z.string().describe("The engine's excerpt of the page; may be empty."),
});
export type WebSearchResult = z.infer<typeof webSearchResult>;

export const webSearchOutput = z.object({
  query: z.string(),
  provider: z.enum(PROVIDERS),
  results: z.array(webSearchResult),
});
export type WebSearchOutput = z.infer<typeof webSearchOutput>;

const TITLE_MAX = 300;
const SNIPPET_MAX = 1_000;
const URL_MAX = 2_048;

/**
 * What an agent may rely on: http(s) URLs without credentials, each page once (ignoring
 * the fragment, a trailing slash and http vs https), titles never empty, at most `max`.
 */
export function cleanResults(raw: readonly RawSearchResult[], max: number): WebSearchResult[] {
  const seen = new Set<string>();
  const results: WebSearchResult[] = [];
  for (const item of raw) {
    if (results.length >= max) break;
    const url = webUrl(item.url);
    if (!url) continue;
    const key = `${url.host}${url.pathname.replace(/\/+$/, "")}${url.search}`;
    if (seen.has(key)) continue;
    seen.add(key);
    results.push({
      title: clip(item.title.trim() || url.hostname, TITLE_MAX),
      url: url.href,
      snippet: clip(item.snippet.trim(), SNIPPET_MAX),
    });
  }
  return results;
}

function webUrl(value: string): URL | undefined {
  if (value.length > URL_MAX) return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username !== "" || url.password !== "" || url.hostname === "") return undefined;
  url.hash = "";
  return url;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

export const webSearch = defineTool({
  spec: {
    id: "web_search",
    toolset: "web_search",
    title: "Web search",
    description:
      "Searches the public web and returns the top results, each with a title, URL and the " +
      "engine's snippet, plus one citation per result. Answers come from DuckDuckGo by " +
      "default, or from Brave Search or a SearXNG instance when the deployment configures one. " +
      "Results can be limited to the past day, week, month or year.",
    category: "research",
    optionality: "optional",
    usageHint:
      "Use when the answer depends on facts that change or that you cannot know: recent " +
      "releases and versions, news, current prices or dates, or a source to cite for a claim.",
    guidelines: {
      do: [
        "Write short, specific queries with the distinctive names and terms, as a person would.",
        "Set recency for anything time-sensitive (a release this month, news this week).",
        "Treat snippets as leads: cite the result's URL and prefer official or primary sources.",
        "Search again with different words when the first results miss, rather than guessing.",
      ],
      dont: [
        "Don't search for what the user already told you or what is stable, well-known fact.",
        "Don't send private data, secrets or personal details in a query: it leaves the system.",
        "Don't quote a snippet as the page's full content or claim you read the page.",
        "Don't fire many near-identical queries in one turn; results are cached for minutes.",
      ],
    },
    requires: ["network"],
    produces: ["search_results", "citations"],
    examples: [
      { title: "Latest release of a project", input: { query: "Node.js 22 LTS release notes" } },
      {
        title: "News from the past week, few results",
        input: { query: "EU AI Act implementation timeline", max_results: 3, recency: "week" },
      },
      {
        title: "An official documentation page",
        input: { query: "DynamoDB conditional writes documentation", recency: "any" },
      },
    ],
    cache: {
      ttlSeconds: 15 * 60,
      keyFields: ["query", "max_results", "recency"],
      staleIfErrorSeconds: 24 * 60 * 60,
    },
    // DuckDuckGo answers heavy callers with a bot check, and Brave's plans are metered.
    rateLimit: {
      perTool: { limit: 60, windowSeconds: 60 },
      perPrincipal: { limit: 20, windowSeconds: 60 },
    },
    timeoutMs: 20_000,
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    fallback: "static_links",
    setup: [
      {
        name: "tools.web_search.provider",
        description:
          'The search engine: "duckduckgo" (default; no key, its public HTML endpoint), ' +
          '"brave" (the Brave Search API; needs SEARCH_API_KEY) or "searxng" (a SearXNG ' +
          "instance; needs tools.web_search.searxngUrl). Set it in the stage configuration " +
          '(TOOLBUS_CONFIG or TOOLBUS_CONFIG_FILE), e.g. {"tools":{"web_search":{"provider":"brave"}}}.',
        required: false,
      },
      {
        name: SEARCH_API_KEY,
        description:
          "Brave Search API subscription token, used when provider is brave (capability " +
          "search_api_key). Create one at https://api-dashboard.search.brave.com and store it " +
          "as a secret; it is sent only to the Brave endpoint, as X-Subscription-Token.",
        env: SEARCH_API_KEY,
        secret: SEARCH_API_KEY,
        required: false,
      },
      {
        name: "tools.web_search.searxngUrl",
        description:
          "Base URL of your SearXNG instance (e.g. https://search.example.org/), required when " +
          "provider is searxng. The instance must allow JSON output: list json under " +
          "search.formats in its settings.yml.",
        required: false,
      },
      {
        name: "tools.web_search.duckduckgoUrl",
        description: `DuckDuckGo HTML endpoint. Default ${DUCKDUCKGO_URL}; change it only for tests or a proxy.`,
        required: false,
      },
      {
        name: "tools.web_search.braveUrl",
        description: `Brave Web Search endpoint. Default ${BRAVE_URL}; change it only for tests or a proxy.`,
        required: false,
      },
    ],
    version: "1",
  },
  needs: {
    detectors: [networkCapability],
    fallback: staticLinks,
    network: createHttpClient,
    secrets: loadFunctionSecrets,
  },
  input: webSearchInput,
  output: webSearchOutput,
  settings: webSearchSettings,
  async execute(input, context) {
    // The providers, with the HTML parser they read answers with, load on the first search:
    // a process that only checks web_search calls (the API) never loads them.
    const { searchProviderFor } = await providers();
    const provider = searchProviderFor(context.settings);
    const raw = await provider.search(
      input.query,
      { maxResults: input.max_results, recency: input.recency },
      context,
    );
    const results = cleanResults(raw, input.max_results);
    const data: WebSearchOutput = { query: input.query, provider: provider.name, results };
    const citations: Citation[] = results.map((r) => ({
      title: r.title,
      url: r.url,
      ...(r.snippet === "" ? {} : { snippet: r.snippet }),
    }));
    return { output: describe(data, provider.label, input.recency), data, citations };
  },
});

const RECENCY_LABEL: Record<Recency, string> = {
  day: "past day",
  week: "past week",
  month: "past month",
  year: "past year",
  any: "any time",
};

function describe(data: WebSearchOutput, label: string, recency: Recency): string {
  const scope = `from ${label} (${RECENCY_LABEL[recency]})`;
  if (data.results.length === 0) {
    return (
      `No web results for "${data.query}" ${scope}. Try fewer or different words` +
      (recency === "any" ? "." : ", or a wider recency.")
    );
  }
  const count = `${data.results.length} ${data.results.length === 1 ? "result" : "results"}`;
  const lines = data.results.map((r, i) => {
    const head = `${i + 1}. [${escapeLabel(r.title)}](${linkTarget(r.url)})`;
    return r.snippet === "" ? head : `${head}\n   ${r.snippet}`;
  });
  return [`Web results for "${data.query}" ${scope}, ${count}:`, "", ...lines].join("\n");
}

function escapeLabel(label: string): string {
  return label.replace(/[\\[\]]/g, (c) => `\\${c}`);
}

/** Parentheses or spaces would end a Markdown link early; angle brackets keep it whole. */
function linkTarget(url: string): string {
  const safe = url.replace(/</g, "%3C").replace(/>/g, "%3E");
  return /[()\s]/.test(safe) ? `<${safe}>` : safe;
}
