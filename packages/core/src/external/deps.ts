import type { CapabilityDetector } from "../capabilities";
import type { Deployment } from "../deployment";
import { toolRuntimeDeps } from "../runtime/deps";
import { readStageSecrets } from "../secrets";
import { DynamoCatalogStore, storeOptions } from "../store/dynamodb";
import type { ExternalRuntimeDeps } from "./handler";

/** What the generic http / mcp handler needs: a tool's runtime, plus the catalog to read it. */
export function externalRuntimeDeps(
  deployment: Deployment,
  extras: { capabilities?: readonly CapabilityDetector[] } = {},
): ExternalRuntimeDeps {
  return {
    ...toolRuntimeDeps(deployment, extras),
    catalog: new DynamoCatalogStore(storeOptions(deployment)),
    readSecrets: (names) => readStageSecrets(names),
  };
}
