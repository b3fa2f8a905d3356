export { braveProvider, parseBraveResponse } from "./brave";
export { searchApiKeyCapability } from "./capability";
export {
  type DuckDuckGoPage,
  duckDuckGoProvider,
  parseDuckDuckGoHtml,
  unwrapRedirect,
} from "./duckduckgo";
export {
  PROVIDERS,
  type ProviderName,
  type RawSearchResult,
  RECENCIES,
  type Recency,
  SEARCH_API_KEY,
  type SearchContext,
  type SearchOptions,
  type SearchProvider,
} from "./provider";
export { searchProviderFor } from "./providers";
export { parseSearxngResponse, searxngProvider, searxngSearchUrl } from "./searxng";
export { BRAVE_URL, DUCKDUCKGO_URL, type WebSearchSettings, webSearchSettings } from "./settings";
export { webSearchToolset } from "./toolset";
export {
  cleanResults,
  type WebSearchInput,
  type WebSearchOutput,
  type WebSearchResult,
  webSearch,
  webSearchInput,
  webSearchOutput,
  webSearchResult,
} from "./web-search";
