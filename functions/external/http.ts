import {
  createExternalHandler,
  deploymentFromEnv,
  externalRuntimeDeps,
} from "@toolbus/core/external";

/** Runs scheduled calls of every registered http tool: each is read from the catalog. */
export const handler = createExternalHandler("http", () =>
  externalRuntimeDeps(deploymentFromEnv()),
);
