// The built-in tools' wire types, derived from their own zod schemas. Type-only imports: the
// client never loads tool code, and a schema change in @toolbus/tools is a compile error here
// rather than a surprise at run time.
import type { calendarInput, calendarOutput } from "@toolbus/tools/calendar";
import type { githubInput, githubOutput } from "@toolbus/tools/github";
import type { linkValidatorInput, linkValidatorOutput } from "@toolbus/tools/link-validator";
import type { readabilityInput, readabilityOutput } from "@toolbus/tools/readability";
import type { rssFeedInput, rssFeedOutput } from "@toolbus/tools/rss-feed";
import type { staticLinksInput, staticLinksOutput } from "@toolbus/tools/static-links";
import type { webSearchInput, webSearchOutput } from "@toolbus/tools/web-search";
import type { z } from "zod";

/**
 * Input and output types of every built-in tool, by id. `input` is what a caller sends (zod's
 * input type: defaults may be left out), `output` the `data` of a succeeded call. `fallback`
 * names the tool whose data comes back when this one was unavailable (the spec's `fallback`).
 */
export interface BuiltinTools {
  calendar: { input: z.input<typeof calendarInput>; output: z.output<typeof calendarOutput> };
  github_api: { input: z.input<typeof githubInput>; output: z.output<typeof githubOutput> };
  link_validator: {
    input: z.input<typeof linkValidatorInput>;
    output: z.output<typeof linkValidatorOutput>;
  };
  readability_analyzer: {
    input: z.input<typeof readabilityInput>;
    output: z.output<typeof readabilityOutput>;
  };
  rss_feed: { input: z.input<typeof rssFeedInput>; output: z.output<typeof rssFeedOutput> };
  static_links: {
    input: z.input<typeof staticLinksInput>;
    output: z.output<typeof staticLinksOutput>;
  };
  web_search: {
    input: z.input<typeof webSearchInput>;
    output: z.output<typeof webSearchOutput>;
    fallback: "static_links";
  };
}

export type BuiltinToolId = keyof BuiltinTools;

/** A built-in id (autocompleted) or any other registered tool's id. */
export type ToolId = BuiltinToolId | (string & {});

/** What `call` accepts as input for a tool: typed for built-ins, `unknown` for the rest. */
export type ToolInput<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T]["input"]
  : unknown;

/** The `data` of a succeeded call of a tool: typed for built-ins, `unknown` for the rest. */
export type ToolOutput<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T]["output"]
  : unknown;

/** The tool that stands in when `T` is unavailable, or `never`. */
export type ToolFallback<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T] extends { fallback: infer F extends BuiltinToolId }
    ? F
    : never
  : never;
