import type { Deployment } from "../deployment";
import { createHttpClient } from "../outbound/client";
import type { CatalogStore } from "../ports";
import type { RegisteredRuntimeDeps } from "../registered/handler";
import { stageSecretReader } from "../secrets";
import { DynamoCallChannel } from "../store/dynamodb/call-channel";
import { DynamoCatalogStore } from "../store/dynamodb/catalog";
import { callerConnections } from "./connections-on-use";
import { relayOf } from "./notices";
import { secretOf, storeOf } from "./pieces";
import { toolDeps } from "./tool";

export type RegisteredCatalog = Pick<CatalogStore, "getTool">;

/**
 * What the generic http / mcp handler needs: a tool's runtime with the network, plus the
 * catalog to read each tool from and the stage's secrets (registered after the deploy, so
 * read at run time rather than bound to the function).
 */
export function registeredDeps(
  deployment: Deployment,
  catalog: RegisteredCatalog = new DynamoCatalogStore(storeOf(deployment)),
  calls?: RegisteredRuntimeDeps["calls"],
): RegisteredRuntimeDeps {
  const http = createHttpClient(deployment.config.outbound);
  return {
    // The handler adds the detectors a registered tool needs (network, its secrets) per call.
    ...toolDeps(deployment, http, { connections: callerConnections }, calls),
    // A registered server asks its client things (elicitation, sampling, roots): the whole
    // relay, not a built-in tool's notices; loaded with the function, as notices.ts says why.
    channel: relayOf(deployment, "channel", () => new DynamoCallChannel(storeOf(deployment))),
    catalog,
    readSecrets: stageSecretReader(secretOf(deployment)),
  };
}
