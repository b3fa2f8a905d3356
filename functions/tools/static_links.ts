import {
  createToolHandler,
  deploymentFromEnv,
  offlineToolRuntimeDeps,
} from "@toolbus/core/runtime";
import { staticLinks } from "@toolbus/tools/static-links";

/**
 * Runs scheduled static_links calls delivered by the bus.
 * Only what this tool runs: its module and the detectors of the capabilities it requires; no
 * SSM client, as its function binds no secret, and no outbound client, as it never reaches the
 * network.
 */
export const handler = createToolHandler(staticLinks, () =>
  offlineToolRuntimeDeps(deploymentFromEnv()),
);
