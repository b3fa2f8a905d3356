import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";
import * as z from "zod";
import { htmlToText } from "../text/html";
import {
  jsonBody,
  type RawSearchResult,
  type Recency,
  requestUpstream,
  type SearchProvider,
  unreadable,
} from "./provider";

const LABEL = "SearXNG";

const TIME_RANGE: Record<Recency, string | undefined> = {
  day: "day",
  week: "week",
  month: "month",
  year: "year",
  any: undefined,
};

const searxngResponse = z.object({ results: z.array(z.unknown()) });

const searxngResult = z.object({
  title: z.string().optional(),
  url: z.string(),
  content: z.string().optional(),
});

/**
 * Reads a SearXNG `format=json` answer: `results[]` with `title`, `url` and `content`.
 * Returns undefined when the body does not have that shape.
 */
export function parseSearxngResponse(body: unknown): RawSearchResult[] | undefined {
  const parsed = searxngResponse.safeParse(body);
  if (!parsed.success) return undefined;
  const results: RawSearchResult[] = [];
  for (const item of parsed.data.results) {
    const result = searxngResult.safeParse(item);
    if (!result.success) continue;
    results.push({
      title: htmlToText(result.data.title ?? ""),
      url: result.data.url,
      snippet: htmlToText(result.data.content ?? ""),
    });
  }
  return results;
}

/** The search endpoint under a SearXNG base URL, which may have a path (`/searx/`). */
export function searxngSearchUrl(base: string): URL {
  const root = new URL(base);
  if (!root.pathname.endsWith("/")) root.pathname += "/";
  root.search = "";
  root.hash = "";
  return new URL("search", root);
}

/** A self-hosted SearXNG instance's JSON API. */
export function searxngProvider(base: string): SearchProvider {
  return {
    name: "searxng",
    label: LABEL,
    async search(query, options, context) {
      const url = searxngSearchUrl(base);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const timeRange = TIME_RANGE[options.recency];
      if (timeRange) url.searchParams.set("time_range", timeRange);
      const response = await requestUpstream(
        context,
        LABEL,
        url.href,
        { method: "GET", headers: { accept: "application/json" } },
        // SearXNG answers 403 when JSON output is not enabled in its settings.yml: a
        // configuration problem on the instance, not a credentials one.
        (answer) =>
          answer.status === 403
            ? new ToolFailure(
                Failures.unavailable(
                  "SearXNG refused JSON output (403). The instance must list json under " +
                    "search.formats in its settings.yml.",
                ),
              )
            : undefined,
      );
      const results = parseSearxngResponse(jsonBody(response, LABEL));
      if (!results) throw unreadable(LABEL);
      return results;
    },
  };
}
