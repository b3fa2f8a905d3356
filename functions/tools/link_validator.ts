import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { linkValidator } from "@toolbus/tools/link-validator";

/** Runs scheduled link_validator calls delivered by the bus. */
export const handler = createToolHandler(linkValidator, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
