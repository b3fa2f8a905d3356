import {
  createToolHandler,
  deploymentFromEnv,
  offlineToolRuntimeDeps,
} from "@toolbus/core/runtime";
import { readabilityAnalyzer } from "@toolbus/tools/readability";

/**
 * Runs scheduled readability_analyzer calls delivered by the bus.
 * Only what this tool runs: its module and the detectors of the capabilities it requires; no
 * SSM client, as its function binds no secret, and no outbound client, as it never reaches the
 * network.
 */
export const handler = createToolHandler(readabilityAnalyzer, () =>
  offlineToolRuntimeDeps(deploymentFromEnv()),
);
