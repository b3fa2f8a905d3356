import { type SweepDeps, sweep } from "../app/calls/lifecycle";
import type { DeliveryRule, DeliveryRuleOutcome } from "../app/subscriptions/delivery-rule";

export interface SweeperDeps extends SweepDeps {
  /** The subscriptions rule, reconciled on every run; absent where the deployment names none. */
  deliveryRule?: Pick<DeliveryRule, "reconcile">;
}

/**
 * The sweeper's entry, run every minute: the call lifecycle's `sweep`, and the reconcile of the
 * subscriptions rule, the only place it is switched off (once the last subscription is gone;
 * the API switches it on) and where a failed call left it wrong is mended. Each runs even
 * when the other fails; a failure of either fails the run (the error-rate alarm sees it).
 */
export function createSweeper(deps: () => SweeperDeps | Promise<SweeperDeps>) {
  return async (): Promise<{
    swept: number;
    announced: number;
    deliveryRule?: DeliveryRuleOutcome;
  }> => {
    const built = await deps();
    const [swept, reconciled] = await Promise.allSettled([
      sweep(built),
      built.deliveryRule?.reconcile(),
    ]);
    if (swept.status === "rejected") throw swept.reason;
    if (reconciled.status === "rejected") throw reconciled.reason;
    return {
      ...swept.value,
      ...(reconciled.value === undefined ? {} : { deliveryRule: reconciled.value }),
    };
  };
}
