import {
  createRegisteredHandler,
  deploymentFromEnv,
  httpToolDefinition,
  registeredRuntimeDeps,
} from "@toolbus/core/registered";

/** Runs scheduled calls of every registered http tool: each is read from the catalog. */
export const handler = createRegisteredHandler("http", httpToolDefinition, () =>
  registeredRuntimeDeps(deploymentFromEnv()),
);
