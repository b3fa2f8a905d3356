import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { readabilityAnalyzer } from "@toolbus/tools/readability";

/** Runs scheduled readability_analyzer calls delivered by the bus. */
export const handler = createToolHandler(readabilityAnalyzer, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
