import { unitFromEnv } from "@toolbus/core/compose/entry";
import { registeredDeps } from "@toolbus/core/compose/registered";
import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createRegisteredHandler, httpToolDefinition } from "@toolbus/core/registered";

/**
 * Runs scheduled calls of every registered http tool: each is read from the catalog. The
 * connection providers' client secrets are bound (to refresh a caller's tokens): read from
 * SSM on the first event.
 */
export const handler = withFunctionSecrets(
  createRegisteredHandler(
    "http",
    httpToolDefinition,
    unitFromEnv((pieces) => registeredDeps(pieces)),
  ),
);
