import { networkCapability } from "@toolbus/core/capabilities";
import {
  createHttpClient,
  failureFromOutbound,
  failureFromStatus,
  type HttpClient,
  type OutboundResponse,
} from "@toolbus/core/outbound";
import { defineTool, ToolFailure } from "@toolbus/core/tool-definition";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import { type Citation, Failures, type ToolsetSpec } from "@toolbus/wire/model";
import * as z from "zod";
import { decodeDocument } from "../text/charset";
import { FEED_FORMATS } from "./formats";

// The feed parser loads with the first fetch and is kept.
const parsing = onFirstUse(() => import("./parse"));

/** Feeds past this are either not feeds or not worth an agent's context. */
export const FEED_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;

const feedUrl = z.url({
  protocol: /^https?$/,
  error: "the feed URL must be an absolute http or https URL",
});

/** `tools.rss_feed` in the stage configuration. */
export const rssFeedSettings = z.strictObject({
  feedUrl: feedUrl
    .optional()
    .describe("The feed `get_configured` reads: the project's blog or news."),
});
export type RssFeedSettings = z.infer<typeof rssFeedSettings>;

const limit = z
  .number()
  .int()
  .min(1)
  .max(MAX_LIMIT)
  .default(DEFAULT_LIMIT)
  .describe("Most items to return, newest first.");

export const rssFeedInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("get_configured").describe("Read the feed this deployment configured."),
    limit,
  }),
  z.strictObject({
    action: z.literal("fetch").describe("Read the feed at `url`."),
    url: feedUrl.max(2048).describe("An RSS 2.0, Atom 1.0 or RSS 1.0 feed URL."),
    limit,
  }),
]);
export type RssFeedInput = z.infer<typeof rssFeedInput>;

export const feedItem = z.object({
  title: z.string(),
  link: z.string().optional(),
  published: z.string().optional().describe("ISO 8601, UTC."),
  summary: z.string().optional().describe("Plain text, at most about 500 characters."),
  id: z.string().optional(),
});

export const rssFeedOutput = z.object({
  feed: z.object({
    title: z.string(),
    link: z.string().optional(),
    format: z.enum(FEED_FORMATS),
  }),
  items: z.array(feedItem).describe("Newest first; items without a date come last."),
});
export type RssFeedOutput = z.infer<typeof rssFeedOutput>;

export const rssFeedToolset: ToolsetSpec = {
  name: "rss_feed",
  description:
    "Recent items from news feeds (RSS 2.0, Atom 1.0, RSS 1.0): the stage's configured feed " +
    "or any public feed URL.",
  owner: "toolbus",
  kind: "builtin",
};

export const rssFeed = defineTool({
  spec: {
    id: "rss_feed",
    toolset: "rss_feed",
    title: "RSS and Atom feeds",
    description:
      "Reads a news feed (RSS 2.0, Atom 1.0 or RSS 1.0) and returns its latest items, newest " +
      "first, each with title, link, publication date and a short plain-text summary. Either " +
      "the feed this deployment configured (the project's blog or release news) or any public " +
      "feed URL.",
    category: "research",
    optionality: "optional",
    usageHint:
      "Use when the text should reflect what was published recently: a 'recent posts' or " +
      "'what's new' section, a newsletter, or continuity with earlier announcements.",
    guidelines: {
      do: [
        "Start with get_configured for the project's own posts; fetch only for a feed URL you were given or found.",
        "Ask for only as many items as the text will use (limit 3-5 for a short section).",
        "Link each item you mention to its own link and keep its published date accurate.",
        "Treat the summaries as excerpts: read the linked page before quoting or relying on details.",
      ],
      dont: [
        "Don't invent posts, dates or links beyond what the feed returned.",
        "Don't pass an HTML page URL and expect its feed to be found: give the feed's own URL.",
        "Don't fetch the same feed again within a few minutes; results are cached for 15 minutes.",
        "Don't use it when the text is timeless and recent posts would not help the reader.",
      ],
    },
    requires: ["network"],
    produces: ["feed_items", "citations"],
    examples: [
      {
        title: "The three latest posts of the configured blog",
        input: { action: "get_configured", limit: 3 },
      },
      {
        title: "Recent releases from a project's Atom feed",
        input: { action: "fetch", url: "https://github.com/nodejs/node/releases.atom", limit: 5 },
      },
      {
        title: "A news feed with the default limit",
        input: { action: "fetch", url: "https://blog.rust-lang.org/feed.xml" },
      },
    ],
    cache: { ttlSeconds: 900, keyFields: ["action", "url", "limit"], staleIfErrorSeconds: 86_400 },
    rateLimit: { perPrincipal: { limit: 60, windowSeconds: 60 } },
    timeoutMs: 25_000,
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    setup: [
      {
        name: "tools.rss_feed.feedUrl",
        description:
          "The http(s) URL of the feed `get_configured` reads, usually the project's blog or " +
          "release feed. Set it in the stage configuration (TOOLBUS_CONFIG, or the file " +
          'TOOLBUS_CONFIG_FILE names), for example {"tools":{"rss_feed":{"feedUrl":' +
          '"https://blog.example.org/feed.xml"}}}. Without it, get_configured answers ' +
          "unavailable and fetch still works. No secrets are needed.",
        required: false,
      },
      {
        name: "outbound.allowHosts",
        description:
          "Only when the feed is on a private network: the host or CIDR range to exempt from " +
          "the SSRF guard (for example 10.20.0.0/16). Leave empty for public feeds.",
        required: false,
      },
    ],
    version: "1",
  },
  needs: { detectors: [networkCapability], network: createHttpClient },
  input: rssFeedInput,
  output: rssFeedOutput,
  settings: rssFeedSettings,
  async execute(input, { http, settings, signal }) {
    const configured = input.action === "get_configured";
    const url = configured ? settings.feedUrl : input.url;
    if (url === undefined) {
      throw new ToolFailure(
        Failures.unavailable(
          "No feed is configured on this stage (tools.rss_feed.feedUrl); use action fetch with a feed URL instead.",
        ),
      );
    }
    const upstream = `The feed at ${displayUrl(url)}`;
    const response = await download(http, url, signal, upstream, configured);
    // The XML and HTML parsers load on the first feed read: a process that only checks
    // rss_feed calls (the API) never loads them.
    const { newestFirst, parseFeed } = await parsing();
    const parsed = parseFeed(decodeFeed(response), response.url);
    if (parsed === undefined) {
      throw new ToolFailure(
        Failures.upstreamError(`${upstream} is not an RSS or Atom feed.`, {
          retryable: false,
          // The agent cannot change a configured URL; a URL it chose it can.
          recovery: configured ? "replan" : "correct_call",
        }),
      );
    }
    const items = newestFirst(parsed.items).slice(0, input.limit);
    const data: RssFeedOutput = {
      feed: {
        title: parsed.title,
        ...(parsed.link ? { link: parsed.link } : {}),
        format: parsed.format,
      },
      items,
    };
    const fallbackUrl = parsed.link ?? response.url;
    const citations: Citation[] = items.map((item) => ({
      title: item.title,
      url: item.link ?? fallbackUrl,
      ...(item.summary ? { snippet: item.summary } : {}),
    }));
    return { output: describe(data, parsed.items.length), data, citations };
  },
});

async function download(
  http: HttpClient,
  url: string,
  signal: AbortSignal,
  upstream: string,
  configured: boolean,
): Promise<OutboundResponse> {
  let response: OutboundResponse;
  try {
    response = await http.request(url, {
      method: "GET",
      headers: {
        accept:
          "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, " +
          "application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5",
      },
      maxBytes: FEED_MAX_BYTES,
      // Per-attempt timeout is the stage's default; two attempts fit in the tool's timeout.
      retries: 1,
      signal,
    });
  } catch (error) {
    throw failureFromOutbound(error, upstream);
  }
  if (response.status === 401 || response.status === 403) {
    // The shared mapping speaks of this stage's credentials; a feed is fetched without any.
    throw new ToolFailure(
      Failures.upstreamError(`${upstream} refused access (${response.status}).`, {
        retryable: false,
        recovery: configured ? "replan" : "correct_call",
      }),
    );
  }
  const failure = failureFromStatus(response, upstream);
  if (failure) {
    if (configured && failure.failure.recovery === "correct_call") {
      throw new ToolFailure({ ...failure.failure, recovery: "replan" });
    }
    throw failure;
  }
  return response;
}

/** Bytes to text by the charset the server or the XML declaration names, UTF-8 otherwise. */
export function decodeFeed(response: Pick<OutboundResponse, "body" | "headers">): string {
  return decodeDocument(response.body, response.headers.get("content-type"), "xml");
}

/** Scheme, host and path only: a private feed's query string may carry its access token. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "the given URL";
  }
}

function describe({ feed, items }: RssFeedOutput, total: number): string {
  const format = { rss2: "RSS 2.0", atom: "Atom", rss1: "RSS 1.0" }[feed.format];
  const heading = feed.link
    ? `Feed: [${escapeText(feed.title)}](${linkTarget(feed.link)})`
    : `Feed: ${escapeText(feed.title)}`;
  const count =
    items.length < total ? `${items.length} newest of ${total} items` : plural(total, "item");
  if (items.length === 0) return `${heading} (${format}) has no items.`;
  const lines = items.map((item) => {
    const title = item.link
      ? `[${escapeText(item.title)}](${linkTarget(item.link)})`
      : `**${escapeText(item.title)}**`;
    const date = item.published ? ` (${item.published.slice(0, 10)})` : "";
    const summary = item.summary ? `\n  ${item.summary}` : "";
    return `- ${title}${date}${summary}`;
  });
  return [`${heading} (${format}, ${count}):`, ...lines].join("\n");
}

function escapeText(text: string): string {
  return text.replace(/[\\[\]*_`]/g, (c) => `\\${c}`);
}

/** Parentheses or spaces would end a Markdown link early; angle brackets keep it whole. */
function linkTarget(url: string): string {
  const safe = url.replace(/</g, "%3C").replace(/>/g, "%3E");
  return /[()\s]/.test(safe) ? `<${safe}>` : safe;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
