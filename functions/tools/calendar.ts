import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { calendar } from "@toolbus/tools/calendar";
import { builtinCapabilities } from "@toolbus/tools/capabilities";

/** Runs scheduled calendar calls delivered by the bus. */
export const handler = createToolHandler(calendar, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
