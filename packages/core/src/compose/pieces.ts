import { RunningCalls } from "../app/calls/lifecycle/cancel";
import type { Deployment } from "../deployment";
import { environmentSecrets } from "../deployment";
import type { SecretSource } from "../outbound/types";
import { type DynamoStoreOptions, storeOptions } from "../store/dynamodb";

/*
 * What the deployment units of one stage share, made on first use and once per deployment
 * and process: the table's options, the call store (which remembers the calls this process
 * wrote, so a recorder here skips reading them back), the bus and the secrets. A Lambda
 * function builds only the units it runs; `npm start` builds every unit on the same
 * deployment, so they share these. Each piece that pulls in a client lives in its own module
 * (calls.ts, bus.ts): a function carries only the clients its units use.
 */

const made = new WeakMap<Deployment, Map<string, unknown>>();

/** The deployment's piece under `name`, made by `make` the first time it is asked for. */
export function shared<T>(deployment: Deployment, name: string, make: () => T): T {
  let pieces = made.get(deployment);
  if (!pieces) {
    pieces = new Map();
    made.set(deployment, pieces);
  }
  if (!pieces.has(name)) pieces.set(name, make());
  return pieces.get(name) as T;
}

/** The table's options: one document client per deployment. */
export const storeOf = (deployment: Deployment): DynamoStoreOptions =>
  shared(deployment, "store", () => storeOptions(deployment));

/** The calls running in this process: where the API and the tools share one, a cancel is immediate. */
export const runningOf = (deployment: Deployment): RunningCalls =>
  shared(deployment, "running-calls", () => new RunningCalls());

/** The secrets tools read: the deployment's, else the environment's. */
export const secretOf = (deployment: Deployment): SecretSource =>
  shared(deployment, "secret", () => deployment.secret ?? environmentSecrets());

/** The value, made on the first call. */
export function once<T>(make: () => T): () => T {
  let value: { made: T } | undefined;
  return () => {
    value ??= { made: make() };
    return value.made;
  };
}
