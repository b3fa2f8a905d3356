import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { readabilityAnalyzer } from "@toolbus/tools/readability";

/**
 * Runs scheduled readability_analyzer calls delivered by the bus.
 * Only what this tool runs: its module and the detectors of the capabilities it requires; no
 * SSM client, as its function binds no secret.
 */
export const handler = createToolHandler(readabilityAnalyzer, () =>
  toolRuntimeDeps(deploymentFromEnv()),
);
