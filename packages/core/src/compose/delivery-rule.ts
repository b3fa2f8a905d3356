import { DeliveryRule } from "../app/subscriptions/delivery-rule";
import { busClient } from "../bus-client";
import type { Deployment } from "../deployment";
import { eventBridgeRuleSwitch } from "../events/rule-switch";
import { anySubscription } from "../store/dynamodb/subscription-presence";
import { shared, storeOf } from "./pieces";

/**
 * The stage's subscriptions rule as the API (on, as a subscription is made) and the sweeper
 * (either way) switch it, or undefined where the deployment names no rule (then nothing
 * touches it, and it stays as deployed).
 */
export function deliveryRuleOf(deployment: Deployment): DeliveryRule | undefined {
  const ruleName = deployment.subscriptionsRule;
  if (!ruleName) return undefined;
  return shared(
    deployment,
    "delivery-rule",
    () =>
      new DeliveryRule({
        // Only whether one exists: the sweeper carries no subscription store.
        subscriptions: { any: () => anySubscription(storeOf(deployment)) },
        rule: eventBridgeRuleSwitch({
          client: busClient(deployment),
          busName: deployment.busName,
          ruleName,
        }),
        ...(deployment.log ? { log: deployment.log } : {}),
      }),
  );
}
