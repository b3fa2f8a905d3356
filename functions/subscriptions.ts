import {
  deploymentFromEnv,
  subscriptionDeps,
  subscriptionHandlers,
} from "@toolbus/core/subscriptions";

const subscriptions = subscriptionHandlers(() => subscriptionDeps(deploymentFromEnv()));

/** Delivers every Toolbus event to the subscriptions that match it. */
export const handler = subscriptions.dispatch;
