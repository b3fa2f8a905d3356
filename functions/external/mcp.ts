import {
  createRegisteredHandler,
  deploymentFromEnv,
  registeredRuntimeDeps,
} from "@toolbus/core/registered";

/** Runs scheduled calls of every tool of a registered MCP server: each is read from the catalog. */
export const handler = createRegisteredHandler("mcp", () =>
  registeredRuntimeDeps(deploymentFromEnv()),
);
