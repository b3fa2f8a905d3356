import { UnavailableError } from "../../errors";
import { fallbackLogger, type Logger } from "../../observability/log";
import type { RuleSwitch, SubscriptionStore } from "../../ports";

/**
 * Whether anything consumes the subscriptions rule's events: any stored subscription
 * (webhook, EventBridge or SQS target), whatever its status. A paused one counts too: one
 * paused as failing has its events queued, and one paused on request is resumed without a
 * word to the rule. Nothing else listens there: `/mcp` resource subscriptions are polled by
 * their stream, and anyone else's interest in ToolDefinitionsChanged is a rule of their own.
 * The one place this is decided, for the sweeper's reconcile.
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
 * does not pay a fan-out invocation per event. Switching on is eager and must succeed: a new
 * subscription is answered only once the rule is on, and is withdrawn (the create failing
 * with a 503) if it cannot be switched on. Switching off is left to the sweeper's `reconcile`,
 * once a minute: only once no subscription is found, and checked again right after, since one
 * made in between switched it on (a no-op) just before. A subscription made in that instant,
 * between the check and the disable, misses the events published until the check after the
 * disable switches the rule on again, milliseconds later; the API's deletes never switch it
 * off, so that instant comes at most once per minute, when the last subscription is gone. A
 * wrong state costs money one way (on with nothing to deliver) and deliveries the other, so
 * every doubt ends with the rule on.
 */
export class DeliveryRule {
  private readonly log: Logger;

  constructor(private readonly deps: DeliveryRuleDeps) {
    this.log = deps.log ?? fallbackLogger();
  }

  /**
   * After a subscription was stored, before it is answered: the rule is on when this resolves.
   * If it cannot be switched on, `withdraw` removes the subscription again and this throws a
   * 503 the caller may retry, so no caller holds a subscription whose events are not flowing.
   * Should the withdrawal fail too, that is logged: the subscription exists, so the reconcile
   * switches the rule on for it within a minute.
   */
  async subscribed(withdraw: () => Promise<void>): Promise<void> {
    try {
      await this.deps.rule.enable();
    } catch (error) {
      try {
        await withdraw();
      } catch (withdrawError) {
        this.log.error(
          "the subscriptions rule could not be enabled, nor the subscription withdrawn: the sweeper will enable the rule",
          { error: withdrawError, enableError: error },
        );
        throw new UnavailableError(
          "Events cannot be routed to subscriptions now, and the subscription could not be withdrawn: it may still be listed, and receives events within a minute. Retry later, or delete it.",
          { cause: error },
        );
      }
      throw new UnavailableError(
        "Events cannot be routed to subscriptions now, so the subscription was not made. Retry later.",
        { cause: error },
      );
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
    return (await this.switchOff()) ? "disabled" : "kept";
  }

  /**
   * Disables the rule, none having been found just before; true when it is left off. The
   * check that found none is the caller's, made as close before as it can be.
   */
  private async switchOff(): Promise<boolean> {
    const { rule, subscriptions } = this.deps;
    await rule.disable();
    // One made between the check and the disable switched the rule on before it: on again.
    // A check that fails leaves the doubt, so the rule goes back on too.
    const neededNow = await deliveryRuleNeeded(subscriptions).catch(async (error: unknown) => {
      await rule.enable();
      throw error;
    });
    if (neededNow) {
      await rule.enable();
      this.log.warn(
        "a subscription was made as the subscriptions rule was disabled: enabled again",
      );
      return false;
    }
    return true;
  }
}
