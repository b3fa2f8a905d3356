import {
  createExternalHandler,
  deploymentFromEnv,
  externalRuntimeDeps,
} from "@toolbus/core/external";

/** Runs scheduled calls of every tool of a registered MCP server: each is read from the catalog. */
export const handler = createExternalHandler("mcp", () => externalRuntimeDeps(deploymentFromEnv()));
