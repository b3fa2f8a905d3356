// The slice of core the subscriptions dispatcher's function needs, apart from the other
// handlers' (runtime/index.ts), so only this function carries the SQS client and the matcher.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { subscriptionDeps } from "./subscription-deps";
export { subscriptionHandlers } from "./subscriptions";
