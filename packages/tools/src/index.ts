import type { ToolsetSpec } from "@toolbus/core/model";
import type { AnyToolDefinition } from "@toolbus/core/tool-definition";
import { calendar, calendarToolset } from "./calendar";
import { githubApi, githubToolset } from "./github";
import { linkValidator, linkValidatorToolset } from "./link-validator";
import { readabilityAnalyzer } from "./readability";
import { rssFeed, rssFeedToolset } from "./rss-feed";
import { staticLinks } from "./static-links";
import { staticLinksToolset, textAnalysisToolset } from "./toolsets";
import { webSearch, webSearchToolset } from "./web-search";

export { builtinCapabilities } from "./capabilities";
export {
  calendar,
  calendarToolset,
  githubApi,
  githubToolset,
  linkValidator,
  linkValidatorToolset,
  readabilityAnalyzer,
  rssFeed,
  rssFeedToolset,
  staticLinks,
  staticLinksToolset,
  textAnalysisToolset,
  webSearch,
  webSearchToolset,
};

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
