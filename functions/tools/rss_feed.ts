import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { rssFeed } from "@toolbus/tools/rss-feed";

/** Runs scheduled rss_feed calls delivered by the bus. */
export const handler = createToolHandler(rssFeed, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
