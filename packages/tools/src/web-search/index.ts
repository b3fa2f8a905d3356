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
export { webSearchToolset } from "./toolset";
export {
  BRAVE_URL,
  cleanResults,
  DUCKDUCKGO_URL,
  type WebSearchInput,
  type WebSearchOutput,
  type WebSearchResult,
  type WebSearchSettings,
  webSearch,
  webSearchInput,
  webSearchOutput,
  webSearchResult,
  webSearchSettings,
} from "./web-search";
