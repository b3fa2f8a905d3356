import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { staticLinks } from "@toolbus/tools/static-links";

/** Runs scheduled static_links calls delivered by the bus. */
export const handler = createToolHandler(staticLinks, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
