import * as z from "zod";
import { PROVIDERS } from "./provider";

/*
 * The settings apart from the tool: the providers read them, and the tool loads the providers
 * on its first search, so neither module imports the other.
 */

export const DUCKDUCKGO_URL = "https://html.duckduckgo.com/html/";
export const BRAVE_URL = "https://api.search.brave.com/res/v1/web/search";

const upstreamUrl = z.url({
  protocol: /^https?$/,
  error: "must be an http or https URL",
});

/** `tools.web_search` in the stage configuration. */
export const webSearchSettings = z
  .strictObject({
    provider: z
      .enum(PROVIDERS)
      .default("duckduckgo")
      .describe("Which search engine answers: duckduckgo (no key), brave or searxng."),
    duckduckgoUrl: upstreamUrl.default(DUCKDUCKGO_URL),
    braveUrl: upstreamUrl.default(BRAVE_URL),
    searxngUrl: upstreamUrl.optional().describe("Base URL of a SearXNG instance."),
  })
  .superRefine((settings, ctx) => {
    if (settings.provider === "searxng" && settings.searxngUrl === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["searxngUrl"],
        message: "searxngUrl is required when provider is searxng",
      });
    }
  });
export type WebSearchSettings = z.infer<typeof webSearchSettings>;
