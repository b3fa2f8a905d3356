import { calendar, calendarToolset } from "./calendar";
import { githubApi, githubToolset } from "./github";
import { linkValidator, linkValidatorToolset } from "./link-validator";
import { readabilityAnalyzer } from "./readability";
import { rssFeed, rssFeedToolset } from "./rss-feed";
import { staticLinks } from "./static-links";
import { staticLinksToolset, textAnalysisToolset } from "./toolsets";
import { webSearch, webSearchToolset } from "./web-search";

export { builtinTools, builtinToolsets } from "./builtin";
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
