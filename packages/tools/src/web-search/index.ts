export { braveProvider, parseBraveResponse, SEARCH_API_KEY } from "./brave";
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
  type SearchContext,
  type SearchOptions,
  type SearchProvider,
} from "./provider";
export { parseSearxngResponse, searxngProvider, searxngSearchUrl } from "./searxng";
export { webSearchToolset } from "./toolset";
export {
  BRAVE_URL,
  cleanResults,
  DUCKDUCKGO_URL,
  searchProviderFor,
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
