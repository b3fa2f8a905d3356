import { braveProvider } from "./brave";
import { duckDuckGoProvider } from "./duckduckgo";
import type { SearchProvider } from "./provider";
import { searxngProvider } from "./searxng";
import type { WebSearchSettings } from "./settings";

/** The provider the stage's settings select. */
export function searchProviderFor(settings: WebSearchSettings): SearchProvider {
  switch (settings.provider) {
    case "brave":
      return braveProvider(settings.braveUrl);
    case "searxng":
      // The settings schema refuses searxng without a URL; this keeps the types honest.
      return searxngProvider(settings.searxngUrl ?? "");
    case "duckduckgo":
      return duckDuckGoProvider(settings.duckduckgoUrl);
  }
}
