import type { Connections } from "../connections/port";
import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { loadedOnUse } from "./loaded-on-use";

/**
 * The deployment's connected accounts as a stand-in that loads them (./connections: the
 * service, the token vault, the KMS client) with the first method called; undefined where the
 * stage configures none. A bundle built in chunks (the API) carries them as a chunk it loads
 * only then; a tool that acts as its caller names `callerConnections` as its `needs.connections`.
 */
export function connectionsOnUse<M extends keyof Connections>(
  deployment: Deployment,
  http: HttpClient,
  methods: readonly M[],
): Pick<Connections, M> | undefined {
  if (!deployment.config.connections) return undefined;
  return loadedOnUse<Pick<Connections, M>>(
    async () => (await import("./connections")).connectionsOf(deployment, http) as Connections,
    methods,
  );
}

/** What a tool's run needs of them: `needs.connections` of tools that may act as their caller. */
export const callerConnections = (deployment: Deployment, http: HttpClient) =>
  connectionsOnUse(deployment, http, ["accessToken"]);
