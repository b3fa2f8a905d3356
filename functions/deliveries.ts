import { unitFromEnv } from "@toolbus/core/compose/entry";
import { subscriptionDeps } from "@toolbus/core/compose/subscriptions";
import { subscriptionHandlers } from "@toolbus/core/subscriptions";

const subscriptions = subscriptionHandlers(unitFromEnv(subscriptionDeps));

/** Attempts again, once a minute, the subscription deliveries that are due. */
export const handler = subscriptions.retryDue;
