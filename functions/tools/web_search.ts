import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { staticLinks } from "@toolbus/tools/static-links";
import { webSearch } from "@toolbus/tools/web-search";

/**
 * Runs scheduled web_search calls; falls back to static_links when search is unavailable.
 * Only what this tool runs: its module, its fallback's, and SSM for the secrets its function binds, loaded on the first event.
 */
export const handler = withFunctionSecrets(
  createToolHandler(webSearch, () =>
    toolRuntimeDeps(deploymentFromEnv(), { fallbacks: [staticLinks] }),
  ),
);
