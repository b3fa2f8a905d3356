import { resolve } from "node:path";
import { type DataKeys, kmsKeys, localKeyFile } from "../connections/envelope";
import { CONNECTIONS_KEY_VARIABLE } from "../connections/names";
import { ConnectionService } from "../connections/service";
import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { DynamoConnectionStore } from "../store/dynamodb/connections";
import { secretOf, shared, storeOf } from "./pieces";

/**
 * The stage's key for connection tokens: the KMS key the stack names (`TOOLBUS_CONNECTIONS_KEY`)
 * on AWS; locally a key file, `.toolbus/connection-key` unless `TOOLBUS_CONNECTION_KEY_FILE`
 * names another.
 */
export function dataKeysFromEnv(env: NodeJS.ProcessEnv = process.env): DataKeys {
  const kmsKey = env[CONNECTIONS_KEY_VARIABLE];
  if (kmsKey) return kmsKeys(kmsKey);
  return localKeyFile(resolve(env.TOOLBUS_CONNECTION_KEY_FILE ?? ".toolbus/connection-key"));
}

/**
 * People's connected accounts on this deployment, reaching providers with `http`; undefined
 * where the stage configures none. One key per deployment and process.
 */
export function connectionsOf(
  deployment: Deployment,
  http: HttpClient,
): ConnectionService | undefined {
  const config = deployment.config.connections;
  if (!config) return undefined;
  return new ConnectionService({
    config,
    store: new DynamoConnectionStore(storeOf(deployment)),
    keys: shared(
      deployment,
      "connection-keys",
      () => deployment.connectionKeys ?? dataKeysFromEnv(),
    ),
    http,
    secret: secretOf(deployment),
    ...(deployment.log ? { log: deployment.log } : {}),
  });
}
