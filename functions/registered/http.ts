import { unitFromEnv } from "@toolbus/core/compose/entry";
import { registeredDeps } from "@toolbus/core/compose/registered";
import { createRegisteredHandler, httpToolDefinition } from "@toolbus/core/registered";

/** Runs scheduled calls of every registered http tool: each is read from the catalog. */
export const handler = createRegisteredHandler(
  "http",
  httpToolDefinition,
  unitFromEnv((pieces) => registeredDeps(pieces)),
);
