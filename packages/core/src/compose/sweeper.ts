import type { Deployment } from "../deployment";
import type { SweeperDeps } from "../runtime/sweeper";
import { busOf } from "./bus";
import { callsOf } from "./calls";
import { deliveryRuleOf } from "./delivery-rule";

/** The sweeper's dependencies: the calls, the bus it announces on, the subscriptions rule. */
export function sweeperDeps(deployment: Deployment): SweeperDeps {
  const deliveryRule = deliveryRuleOf(deployment);
  return {
    calls: callsOf(deployment),
    bus: busOf(deployment),
    ...(deliveryRule ? { deliveryRule } : {}),
  };
}
