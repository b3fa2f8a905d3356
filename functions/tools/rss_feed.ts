import { networkCapability } from "@toolbus/core/capabilities";
import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { rssFeed } from "@toolbus/tools/rss-feed";

/**
 * Runs scheduled rss_feed calls delivered by the bus.
 * Only what this tool runs: its module and the detectors of the capabilities it requires; no
 * SSM client, as its function binds no secret.
 */
export const handler = createToolHandler(rssFeed, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: [networkCapability] }),
);
