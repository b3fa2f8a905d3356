import type { ConnectionService } from "./service";

/*
 * The service as the API and tools hold it before it is loaded: a stand-in whose every method
 * loads it (compose/loaded-on-use.ts). Only types come from ./service, so holding the port
 * costs no token vault, OAuth client or KMS client until a connection is used.
 */

/** Everything the API asks of connected accounts. */
export type Connections = Pick<
  ConnectionService,
  "providers" | "accessToken" | "link" | "begin" | "finish" | "list" | "listAll" | "disconnect"
>;

/** The methods of `Connections`, for a stand-in that loads the service on first use. */
export const CONNECTION_METHODS = [
  "providers",
  "accessToken",
  "link",
  "begin",
  "finish",
  "list",
  "listAll",
  "disconnect",
] as const satisfies readonly (keyof Connections)[];
