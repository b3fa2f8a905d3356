import { fallbackLogger, type Logger } from "../../observability/log";
import type { RuleSwitch, SubscriptionStore } from "../../ports";

/**
 * Whether anything consumes the subscriptions rule's events: any stored subscription
 * (webhook, EventBridge or SQS target), whatever its status. A paused one counts too: one
 * paused as failing has its events queued, and one paused on request is resumed without a
 * word to the rule. Nothing else listens there: `/mcp` resource subscriptions are polled by
 * their stream, and anyone else's interest in ToolDefinitionsChanged is a rule of their own.
 * The one place this is decided, for the API's writes and the sweeper's reconcile alike.
 */
export function deliveryRuleNeeded(
  subscriptions: Pick<SubscriptionStore, "any">,
): Promise<boolean> {
  return subscriptions.any();
}

/** What the reconcile found and did. */
export type DeliveryRuleOutcome = "kept" | "enabled" | "disabled";

export interface DeliveryRuleDeps {
  subscriptions: Pick<SubscriptionStore, "any">;
  /** The stage bus's subscriptions rule (wiring.ts), whose only target is the fan-out. */
  rule: RuleSwitch;
  log?: Logger;
}

/**
 * Keeps the subscriptions rule on only while a subscription exists, so a stage without one
 * does not pay a fan-out invocation per event. Switching on is eager (before a new
 * subscription is answered); switching off is careful: only once none is found, and checked
 * again after, since a subscription made meanwhile may have switched it on just before. What
 * a race or a failed call leaves wrong, the sweeper's `reconcile` mends within a minute. A
 * wrong state costs money one way (on with nothing to deliver) and deliveries the other, so
 * every doubt ends with the rule on.
 */
export class DeliveryRule {
  private readonly log: Logger;

  constructor(private readonly deps: DeliveryRuleDeps) {
    this.log = deps.log ?? fallbackLogger();
  }

  /**
   * After a subscription was stored: the rule is on when this resolves. A failure is logged,
   * not thrown: the subscription is stored, and the reconcile switches the rule on.
   */
  async subscribed(): Promise<void> {
    try {
      await this.deps.rule.enable();
    } catch (error) {
      this.log.error("the subscriptions rule could not be enabled: the sweeper will", { error });
    }
  }

  /** After a subscription was removed: off if it was the last one. Failures are logged. */
  async unsubscribed(): Promise<void> {
    try {
      await this.offIfUnneeded();
    } catch (error) {
      this.log.error("the subscriptions rule could not be settled: the sweeper will", { error });
    }
  }

  /** The rule's state made to agree with whether a subscription exists (the sweeper's job). */
  async reconcile(): Promise<DeliveryRuleOutcome> {
    const { rule, subscriptions } = this.deps;
    const [needed, on] = await Promise.all([deliveryRuleNeeded(subscriptions), rule.enabled()]);
    if (needed === on) return "kept";
    if (needed) {
      await rule.enable();
      this.log.warn("the subscriptions rule was off while a subscription exists: enabled");
      return "enabled";
    }
    return (await this.offIfUnneeded()) ? "disabled" : "kept";
  }

  /** Disables the rule if no subscription exists; true when it is left off. */
  private async offIfUnneeded(): Promise<boolean> {
    const { rule, subscriptions } = this.deps;
    if (await deliveryRuleNeeded(subscriptions)) return false;
    await rule.disable();
    // One made between the check and the disable switched the rule on before it: on again.
    // A check that fails leaves the doubt, so the rule goes back on too.
    const neededNow = await deliveryRuleNeeded(subscriptions).catch(async (error: unknown) => {
      await rule.enable();
      throw error;
    });
    if (neededNow) {
      await rule.enable();
      return false;
    }
    return true;
  }
}
