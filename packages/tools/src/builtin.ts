import type { AnyToolDefinition } from "@toolbus/core/tool-definition";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { calendar, calendarToolset } from "./calendar/calendar";
import { githubApi } from "./github/github-api";
import { githubToolset } from "./github/toolset";
import { linkValidator, linkValidatorToolset } from "./link-validator/link-validator";
import { readabilityAnalyzer } from "./readability/readability-analyzer";
import { rssFeed, rssFeedToolset } from "./rss-feed/rss-feed";
import { staticLinks } from "./static-links/static-links";
import { staticLinksToolset, textAnalysisToolset } from "./toolsets";
import { webSearchToolset } from "./web-search/toolset";
import { webSearch } from "./web-search/web-search";

/*
 * Each tool's definition module itself, not its folder's index: an index also re-exports
 * what the tool only runs (parsers, providers), and a bundle split into chunks would load
 * all of that with the definitions, even though each tool loads it on its first run.
 */

/** Every tool this package implements, sorted by id so listings are stable. */
export const builtinTools: readonly AnyToolDefinition[] = Object.freeze(
  [staticLinks, readabilityAnalyzer, webSearch, githubApi, linkValidator, rssFeed, calendar].sort(
    (a, b) => a.spec.id.localeCompare(b.spec.id, "en"),
  ),
);

/** The toolsets of `builtinTools`, sorted by name; all owned by Toolbus itself. */
export const builtinToolsets: readonly ToolsetSpec[] = Object.freeze(
  [
    staticLinksToolset,
    textAnalysisToolset,
    webSearchToolset,
    githubToolset,
    linkValidatorToolset,
    rssFeedToolset,
    calendarToolset,
  ].sort((a, b) => a.name.localeCompare(b.name, "en")),
);
