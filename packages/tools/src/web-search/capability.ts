import { type CapabilityDetector, secretCapability } from "@toolbus/core/capabilities";
import { SEARCH_API_KEY } from "./provider";

/** `search_api_key`: a Brave Search API key is set (web_search then uses Brave). */
export const searchApiKeyCapability: CapabilityDetector = secretCapability(
  "search_api_key",
  SEARCH_API_KEY,
  "An API key for the Brave Search API.",
);
