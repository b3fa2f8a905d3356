import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { githubApi } from "@toolbus/tools/github";

/** Runs scheduled github_api calls delivered by the bus. */
export const handler = createToolHandler(githubApi, () =>
  toolRuntimeDeps(deploymentFromEnv(), { capabilities: builtinCapabilities }),
);
