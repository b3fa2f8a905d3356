import { type Deployment, deploymentFromEnv } from "../deployment";
import { once } from "./pieces";

/**
 * A Lambda entry point's unit, built on its first event from the function's environment and
 * kept for the container's life. Under `npm start` every entry reads the same deployment, so
 * all of them, and the API, share one set of pieces.
 */
export function unitFromEnv<T>(unit: (deployment: Deployment) => T): () => T {
  return once(() => unit(deploymentFromEnv()));
}
