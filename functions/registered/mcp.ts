import { unitFromEnv } from "@toolbus/core/compose/entry";
import { registeredDeps } from "@toolbus/core/compose/registered";
import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createRegisteredHandler, mcpToolDefinition } from "@toolbus/core/registered";

/**
 * Runs scheduled calls of every tool of a registered MCP server: each is read from the catalog.
 * The connection providers' client secrets are bound (to refresh a caller's tokens): read from
 * SSM on the first event.
 */
export const handler = withFunctionSecrets(
  createRegisteredHandler(
    "mcp",
    mcpToolDefinition,
    unitFromEnv((pieces) => registeredDeps(pieces)),
  ),
);
