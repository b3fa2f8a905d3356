import {
  createRegisteredHandler,
  deploymentFromEnv,
  mcpToolDefinition,
  registeredRuntimeDeps,
} from "@toolbus/core/registered";

/** Runs scheduled calls of every tool of a registered MCP server: each is read from the catalog. */
export const handler = createRegisteredHandler("mcp", mcpToolDefinition, () =>
  registeredRuntimeDeps(deploymentFromEnv()),
);
