import { networkCapability } from "@toolbus/core/capabilities";
import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { staticLinks, staticLinksCapability } from "@toolbus/tools/static-links";
import { webSearch } from "@toolbus/tools/web-search";

/**
 * Runs scheduled web_search calls; falls back to static_links when search is unavailable or
 * its upstream fails, if static_links has links to serve (its capability says).
 * Only what this tool runs: its module, its fallback's, the detectors of the capabilities it
 * requires and of its fallback's, and SSM for the secrets its function binds, loaded on the
 * first event.
 */
export const handler = withFunctionSecrets(
  createToolHandler(webSearch, () =>
    toolRuntimeDeps(deploymentFromEnv(), {
      capabilities: [networkCapability, staticLinksCapability],
      fallbacks: [staticLinks],
    }),
  ),
);
