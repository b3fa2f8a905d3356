import { unitFromEnv } from "@toolbus/core/compose/entry";
import { subscriptionDeps } from "@toolbus/core/compose/subscriptions";
import { subscriptionHandlers } from "@toolbus/core/subscriptions";

const subscriptions = subscriptionHandlers(unitFromEnv(subscriptionDeps));

/** Delivers every Toolbus event to the subscriptions that match it. */
export const handler = subscriptions.dispatch;
