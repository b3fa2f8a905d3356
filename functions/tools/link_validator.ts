import { networkCapability } from "@toolbus/core/capabilities";
import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { linkValidator } from "@toolbus/tools/link-validator";

/**
 * Runs scheduled link_validator calls delivered by the bus.
 * Only what this tool runs: its module and the detectors of the capabilities it requires; no
 * SSM client, as its function binds no secret.
 */
export const handler = createToolHandler(linkValidator, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: [networkCapability] }),
);
