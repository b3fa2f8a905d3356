import {
  deploymentFromEnv,
  subscriptionDeps,
  subscriptionHandlers,
} from "@toolbus/core/subscriptions";

const subscriptions = subscriptionHandlers(() => subscriptionDeps(deploymentFromEnv()));

/** Attempts again, once a minute, the subscription deliveries that are due. */
export const handler = subscriptions.retryDue;
