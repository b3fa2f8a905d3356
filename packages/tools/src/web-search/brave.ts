import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";
import * as z from "zod";
import { htmlToText } from "../text/html";
import {
  jsonBody,
  type RawSearchResult,
  type Recency,
  requestUpstream,
  SEARCH_API_KEY,
  type SearchProvider,
  unreadable,
} from "./provider";

const LABEL = "Brave Search";

/** Brave's `freshness`: past day, week, month or year. */
const FRESHNESS: Record<Recency, string | undefined> = {
  day: "pd",
  week: "pw",
  month: "pm",
  year: "py",
  any: undefined,
};

/** Brave allows at most 20 results per page. */
const MAX_COUNT = 20;

const braveResponse = z.object({
  // Brave leaves `web` out when nothing matched.
  web: z.object({ results: z.array(z.unknown()) }).optional(),
});

const braveResult = z.object({
  title: z.string().optional(),
  url: z.string(),
  description: z.string().optional(),
});

/**
 * Reads a Brave Web Search API answer: `web.results[]` with `title`, `url` and
 * `description`. Titles and descriptions carry highlighting markup (`<strong>`), removed here.
 * Returns undefined when the body does not have that shape.
 */
export function parseBraveResponse(body: unknown): RawSearchResult[] | undefined {
  const parsed = braveResponse.safeParse(body);
  if (!parsed.success) return undefined;
  const results: RawSearchResult[] = [];
  for (const item of parsed.data.web?.results ?? []) {
    const result = braveResult.safeParse(item);
    if (!result.success) continue;
    results.push({
      title: htmlToText(result.data.title ?? ""),
      url: result.data.url,
      snippet: htmlToText(result.data.description ?? ""),
    });
  }
  return results;
}

/** The Brave Search API, with the stage's SEARCH_API_KEY (capability `search_api_key`). */
export function braveProvider(endpoint: string): SearchProvider {
  return {
    name: "brave",
    label: LABEL,
    async search(query, options, context) {
      const key = context.secret(SEARCH_API_KEY);
      if (!key) {
        throw new ToolFailure(
          Failures.unavailable(
            'web_search is set to use Brave Search (tools.web_search.provider = "brave"), ' +
              `but the secret ${SEARCH_API_KEY} is not set on this stage.`,
          ),
        );
      }
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      // Ask for a few extra so duplicates do not leave the answer short.
      url.searchParams.set("count", String(Math.min(MAX_COUNT, options.maxResults * 2)));
      const freshness = FRESHNESS[options.recency];
      if (freshness) url.searchParams.set("freshness", freshness);
      const response = await requestUpstream(
        context,
        LABEL,
        url.href,
        {
          method: "GET",
          headers: { accept: "application/json", "x-subscription-token": key },
          // The key travels in a header of Brave's own, which a redirect to another host
          // would carry along: the API never redirects, so none is followed.
          followRedirects: false,
        },
        (answer) =>
          answer.status >= 300 && answer.status < 400
            ? new ToolFailure(
                Failures.upstreamError(
                  `${LABEL} answered with a redirect (${answer.status}), which Toolbus does not follow with the API key.`,
                  { retryable: false },
                ),
              )
            : undefined,
      );
      const results = parseBraveResponse(jsonBody(response, LABEL));
      if (!results) throw unreadable(LABEL);
      return results;
    },
  };
}
