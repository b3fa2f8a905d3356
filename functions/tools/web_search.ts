import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { staticLinks } from "@toolbus/tools/static-links";
import { webSearch } from "@toolbus/tools/web-search";

/** Runs scheduled web_search calls; falls back to static_links when search is unavailable. */
export const handler = createToolHandler(webSearch, () =>
  toolRuntimeDeps(deploymentFromEnv(), {
    capabilities: builtinCapabilities,
    fallbacks: [staticLinks],
  }),
);
