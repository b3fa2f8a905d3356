import { unitFromEnv } from "@toolbus/core/compose/entry";
import { registeredDeps } from "@toolbus/core/compose/registered";
import { createRegisteredHandler, mcpToolDefinition } from "@toolbus/core/registered";

/** Runs scheduled calls of every tool of a registered MCP server: each is read from the catalog. */
export const handler = createRegisteredHandler(
  "mcp",
  mcpToolDefinition,
  unitFromEnv((pieces) => registeredDeps(pieces)),
);
