import type { CapabilityDetector } from "../app/capabilities/detectors";
import type { Deployment } from "../deployment";
import { toolRuntimeDeps } from "../runtime/deps";
import { stageSecretReader } from "../secrets";
import { DynamoCatalogStore, storeOptions } from "../store/dynamodb";
import type { RegisteredRuntimeDeps } from "./handler";

/** What the generic http / mcp handler needs: a tool's runtime, plus the catalog to read it. */
export function registeredRuntimeDeps(
  deployment: Deployment,
  extras: { capabilities?: readonly CapabilityDetector[] } = {},
): RegisteredRuntimeDeps {
  const runtime = toolRuntimeDeps(deployment, extras);
  return {
    ...runtime,
    catalog: new DynamoCatalogStore(storeOptions(deployment)),
    readSecrets: stageSecretReader(runtime.secret),
  };
}
