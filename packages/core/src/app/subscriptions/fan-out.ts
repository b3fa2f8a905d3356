import { createPatternIndex, type PatternIndex } from "@toolbus/pattern";
import { occurredAtOf } from "@toolbus/wire/model/events";
import type {
  Delivery,
  Subscription,
  SubscriptionSecrets,
  SubscriptionTarget,
} from "@toolbus/wire/model/subscription";
import { deliveryBody } from "@toolbus/wire/webhooks/delivery-body";
import * as z from "zod";
import type { StageConfig } from "../../config";
import { fallbackLogger, type Logger } from "../../observability/log";
import type { DeliveryStore, StoredSubscription, SubscriptionStore } from "../../ports";
import { retryDelayMs } from "../../subscriptions/backoff";
import { inPool } from "../../util/in-pool";
import { EVENT_SOURCE } from "../../wiring";

/** What one attempt at a target came to. */
export type AttemptOutcome =
  | { ok: true; status?: number }
  | {
      ok: false;
      retryable: boolean;
      /** The receiver says the endpoint is gone for good (410): its subscription is paused. */
      gone?: boolean;
      status?: number;
      retryAfterMs?: number;
      message: string;
    };

/** Sends one delivery's body to a target, signed with the subscription's secrets. */
export type DeliverySender = (
  target: SubscriptionTarget,
  delivery: Delivery,
  secrets: SubscriptionSecrets,
) => Promise<AttemptOutcome>;

export interface SubscriptionFanOutDeps {
  subscriptions: SubscriptionStore;
  deliveries: DeliveryStore;
  send: DeliverySender;
  config: StageConfig;
  log?: Logger;
  now?: () => Date;
}

/** A Toolbus event as the bus hands it over: what the fan-out needs of it. */
const toolbusEvent = z.object({
  source: z.literal(EVENT_SOURCE),
  "detail-type": z.string().min(1).max(128),
  time: z.string().optional(),
  detail: z.looseObject({ eventKey: z.string().min(1).max(512) }),
});

/** How long a fan-out trusts its index without asking whether subscriptions changed. */
const VERSION_CHECK_MS = 1_000;
/** Deliveries attempted at once by one fan-out. */
const CONCURRENT_ATTEMPTS = 16;
/** A delivery being attempted is not due for this long (a webhook's 15 s timeout and more). */
const ATTEMPT_LEASE_MS = 90_000;
/** The subscriptions are read again at least this often, version or not. */
const RELIST_MS = 5 * 60_000;
/**
 * How long one run (an event's fan-out, or a retry run) starts new attempts: a webhook may then
 * take its 15 s timeout, and the run still ends within its function's 45 s.
 */
const ATTEMPT_BUDGET_MS = 25_000;
/** A paused subscription's due deliveries are looked at again this much later. */
const PAUSED_RECHECK_MS = 60_000;
/**
 * What a fan-out remembers having settled (sent, or handed to the retry schedule), so an event
 * handed to the same instance again (the bus's duplicate, the retry of an invocation that
 * threw) is not sent again: best effort, receivers dedupe by webhook-id anyway.
 */
const SETTLED_KEPT_MS = 15 * 60_000;
const SETTLED_MAX = 10_000;

/**
 * Subscription delivery: each Toolbus event fans out to every subscription whose pattern
 * matches it. (Not the call dispatcher of app/calls/dispatch.ts, which hands one call to its
 * tool's handler.) One instance serves every subscription: each event is matched against all
 * active ones at once through a pattern index (cost by the event, not by how many
 * subscriptions there are).
 *
 * Attempt first: each match is sent at once, and a first attempt that succeeds writes nothing
 * (only a failure streak that is not zero is reset). Only a first attempt that fails becomes a
 * delivery item (one per event and subscription), scheduled again in the item itself
 * (`retryDue` picks up what is due) until the stage's retry window closes: then it is a dead
 * letter, listed under the subscription's failures and redrivable. Nothing is lost in between:
 * when a match can be neither sent nor queued (the store is down), `dispatch` throws once the
 * other matches are done, and the bus (Lambda's retries on AWS) hands the event over again. A
 * subscription whose attempts fail `pauseAfterFailures` times in a row is paused as failing.
 */
export class SubscriptionFanOut {
  private readonly now: () => Date;
  private readonly log: Logger;
  private index: PatternIndex<string> = createPatternIndex();
  private version = -1;
  private checkedAt = 0;
  private listedAt = 0;
  private refreshing: Promise<void> | undefined;
  /** Subscription and event key -> when this instance settled it (Date.now()), oldest first. */
  private readonly settled = new Map<string, number>();

  constructor(private readonly deps: SubscriptionFanOutDeps) {
    this.now = deps.now ?? (() => new Date());
    this.log = deps.log ?? fallbackLogger();
  }

  /**
   * Matches one event and delivers it to every matching active subscription; how many matched.
   * First attempts start within `budgetMs`; matches left after that are queued, due at once,
   * for the retry driver. Throws when a match could be neither delivered nor queued (after
   * trying every other one), so the event is handed over again.
   */
  async dispatch(event: unknown, budgetMs = ATTEMPT_BUDGET_MS): Promise<number> {
    const parsed = toolbusEvent.safeParse(event);
    if (!parsed.success) {
      this.log.warn("not a Toolbus event: nothing to deliver", {
        issues: parsed.error.issues.slice(0, 5).map((issue) => issue.message),
      });
      return 0;
    }
    const started = Date.now();
    await this.refresh();
    // The event as the bus delivered it: patterns may name any envelope field.
    const matched = this.index.match(event);
    const at = this.now().toISOString();
    const body = deliveryBody({
      detailType: parsed.data["detail-type"],
      occurredAt: occurredAtOf(parsed.data.detail, parsed.data.time ?? at),
      detail: parsed.data.detail,
    });
    const eventKey = parsed.data.detail.eventKey;
    const unsettled: unknown[] = [];
    await inPool(matched, CONCURRENT_ATTEMPTS, async (id) => {
      const delivery: Delivery = {
        subscriptionId: id,
        eventKey,
        detailType: parsed.data["detail-type"],
        status: "pending",
        body,
        attempts: 0,
        firstAttemptAt: at,
      };
      try {
        await this.firstAttempt(delivery, Date.now() - started >= budgetMs);
      } catch (error) {
        this.log.error("a delivery could be neither sent nor queued: the event is needed again", {
          subscriptionId: id,
          eventKey,
          error,
        });
        unsettled.push(error);
      }
    });
    if (unsettled.length > 0) {
      throw new Error(
        `${unsettled.length} of ${matched.length} deliveries of event ${eventKey} could be neither sent nor queued for a retry`,
        { cause: unsettled[0] },
      );
    }
    return matched.length;
  }

  /**
   * Attempts the deliveries that are due. Each subscription's are taken in order, one at a
   * time, and its turn ends at its first failure (the rest wait for the next run): a receiver
   * that is down or hangs costs one attempt per run, not the run. Up to CONCURRENT_ATTEMPTS
   * subscriptions at once; no attempt starts after `budgetMs`, so a run ends within its
   * function's timeout. How many were attempted.
   */
  async retryDue(limit = 500, budgetMs = ATTEMPT_BUDGET_MS): Promise<number> {
    const started = Date.now();
    const due = await this.deps.deliveries.listDue(this.now().toISOString(), limit);
    const bySubscription = new Map<string, Delivery[]>();
    for (const delivery of due) {
      const queue = bySubscription.get(delivery.subscriptionId) ?? [];
      queue.push(delivery);
      bySubscription.set(delivery.subscriptionId, queue);
    }
    const queues = [...bySubscription.values()];
    let attempted = 0;
    const worker = async () => {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const delivery of queue) {
          if (Date.now() - started > budgetMs) return;
          const lease = new Date(this.now().getTime() + ATTEMPT_LEASE_MS).toISOString();
          // Only the run that moves it on sends it: a racing run finds it claimed.
          const claimed = await this.deps.deliveries.claim(delivery, lease);
          if (!claimed) continue;
          attempted++;
          if (!(await this.attempt(claimed))) break;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_ATTEMPTS }, worker));
    return attempted;
  }

  /** Forgets the index, so the next event reads the subscriptions again (after a local write). */
  invalidate(): void {
    this.checkedAt = 0;
  }

  /**
   * An event's first attempt at one subscription. Whatever it comes to, the delivery is
   * settled when this returns: sent, queued for a retry, or dead. It throws when it could not
   * be settled (the subscription could not be read, the retry item could not be written): the
   * caller then has the event handed over again.
   */
  private async firstAttempt(delivery: Delivery, late: boolean): Promise<void> {
    const { deliveries, subscriptions } = this.deps;
    const key = settledKey(delivery);
    if (this.wasSettled(key)) return;
    const stored = await subscriptions.get(delivery.subscriptionId);
    // Deleted since the index was built: nothing to send, nothing anyone could look at.
    if (!stored) return;
    const { subscription } = stored;
    const now = this.now();
    if (subscription.status === "paused" || late) {
      // Paused on request: events are not queued. Paused as failing: they wait for it to be
      // resumed. Out of time: the retry driver sends it, now.
      if (subscription.status === "paused" && subscription.pausedBecause !== "failing") return;
      const due = now.getTime() + (subscription.status === "paused" ? PAUSED_RECHECK_MS : 0);
      await deliveries.create({ ...delivery, nextAttemptAt: new Date(due).toISOString() });
      this.settle(key);
      return;
    }
    const outcome = await this.send(stored, delivery);
    if (outcome.ok) {
      this.settle(key);
      await this.resetStreak(subscription);
      return;
    }
    const next = this.afterFailure(delivery, outcome);
    // False: this event already has a delivery item here (handed over twice), which goes on.
    const created = await deliveries.create(next);
    this.settle(key);
    if (!created) return;
    await this.countFailure(next, outcome).catch((error: unknown) => {
      this.log.error("a failed delivery was queued but its failure was not counted", {
        subscriptionId: delivery.subscriptionId,
        eventKey: delivery.eventKey,
        error,
      });
    });
  }

  /**
   * One attempt of a due delivery; whether the target took it. A failure of its own (the
   * store, a bug) is logged, not passed to the others: the item is still due, and the next run
   * takes it once its lease ends.
   */
  private async attempt(delivery: Delivery): Promise<boolean> {
    return this.tryAttempt(delivery).catch((error: unknown) => {
      this.log.error("a delivery attempt failed before it was recorded", {
        subscriptionId: delivery.subscriptionId,
        eventKey: delivery.eventKey,
        error,
      });
      return false;
    });
  }

  private async tryAttempt(delivery: Delivery): Promise<boolean> {
    const { deliveries, subscriptions } = this.deps;
    const stored = await subscriptions.get(delivery.subscriptionId);
    const now = this.now();
    if (!stored) {
      await deliveries.save(dead(delivery, now, "the subscription was deleted"), delivery.attempts);
      // Nothing was sent: the run may go on with the rest of its deliveries.
      return true;
    }
    if (stored.subscription.status === "paused") {
      const later = new Date(now.getTime() + PAUSED_RECHECK_MS).toISOString();
      await deliveries.save({ ...delivery, nextAttemptAt: later }, delivery.attempts);
      return false;
    }
    const outcome = await this.send(stored, delivery);
    if (outcome.ok) {
      const { nextAttemptAt: _, lastError: __, ...rest } = delivery;
      const saved = await deliveries.save(
        {
          ...rest,
          status: "delivered",
          attempts: delivery.attempts + 1,
          deliveredAt: this.now().toISOString(),
        },
        delivery.attempts,
      );
      if (saved) await this.resetStreak(stored.subscription);
      return true;
    }
    const next = this.afterFailure(delivery, outcome);
    // Another attempt was recorded meanwhile: that one counts, not this one.
    if (!(await deliveries.save(next, delivery.attempts))) return false;
    await this.countFailure(next, outcome);
    return false;
  }

  /** Sends a delivery to its subscription's target; a sender that throws is a retryable failure. */
  private send(stored: StoredSubscription, delivery: Delivery): Promise<AttemptOutcome> {
    return this.deps.send(stored.subscription.target, delivery, stored.secrets).catch(
      (error: unknown): AttemptOutcome => ({
        ok: false,
        retryable: true,
        message: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  /** The delivery after a failed attempt: due again after the backoff, or dead. */
  private afterFailure(
    delivery: Delivery,
    outcome: Extract<AttemptOutcome, { ok: false }>,
  ): Delivery {
    const at = this.now();
    const attempts = delivery.attempts + 1;
    const lastError = {
      at: at.toISOString(),
      message: outcome.message.slice(0, 500),
      ...(outcome.status === undefined ? {} : { status: outcome.status }),
    };
    const delay = retryDelayMs(attempts, outcome.retryAfterMs);
    const windowEnds =
      Date.parse(delivery.firstAttemptAt) +
      this.deps.config.subscriptions.retryWindowHours * 3600 * 1000;
    return outcome.retryable && at.getTime() + delay <= windowEnds
      ? {
          ...delivery,
          attempts,
          lastError,
          nextAttemptAt: new Date(at.getTime() + delay).toISOString(),
        }
      : dead({ ...delivery, attempts, lastError }, at, lastError.message);
  }

  /** A success resets a failure streak; one that is already zero costs no write. */
  private async resetStreak(subscription: Subscription): Promise<void> {
    if (subscription.failureStreak === 0) return;
    await this.deps.subscriptions.countAttempt(subscription.id, true).catch((error: unknown) => {
      // Delivered all the same: the next success resets it.
      this.log.warn("a delivered subscription's failure streak was not reset", {
        subscriptionId: subscription.id,
        error,
      });
    });
  }

  /** Counts a recorded failure, and pauses a subscription that keeps failing or is gone. */
  private async countFailure(
    next: Delivery,
    outcome: Extract<AttemptOutcome, { ok: false }>,
  ): Promise<void> {
    this.log.warn("a delivery failed", {
      subscriptionId: next.subscriptionId,
      eventKey: next.eventKey,
      attempts: next.attempts,
      status: outcome.status,
      retrying: next.status === "pending",
    });
    const streak = await this.deps.subscriptions.countAttempt(next.subscriptionId, false);
    if (
      streak !== undefined &&
      (outcome.gone || streak >= this.deps.config.subscriptions.pauseAfterFailures)
    ) {
      await this.pauseFailing(next.subscriptionId, streak);
    }
  }

  private wasSettled(key: string): boolean {
    const at = this.settled.get(key);
    if (at === undefined) return false;
    if (Date.now() - at <= SETTLED_KEPT_MS) return true;
    this.settled.delete(key);
    return false;
  }

  private settle(key: string): void {
    this.settled.delete(key);
    this.settled.set(key, Date.now());
    // Oldest first: drop what is past its time, and the oldest beyond the cap.
    for (const [oldest, at] of this.settled) {
      if (this.settled.size <= SETTLED_MAX && Date.now() - at <= SETTLED_KEPT_MS) break;
      this.settled.delete(oldest);
    }
  }

  private async pauseFailing(id: string, streak: number): Promise<void> {
    const stored = await this.deps.subscriptions.get(id);
    if (!stored || stored.subscription.status === "paused") return;
    try {
      await this.deps.subscriptions.replace(
        {
          ...stored.subscription,
          status: "paused",
          pausedBecause: "failing",
          failureStreak: streak,
          updatedAt: this.now().toISOString(),
        },
        stored.secrets,
      );
      this.log.warn("a subscription was paused: its deliveries keep failing", {
        subscriptionId: id,
        failureStreak: streak,
      });
    } catch (error) {
      // Someone changed it meanwhile (paused, resumed, deleted it): theirs is the last word.
      this.log.info("a failing subscription changed before it could be paused", {
        subscriptionId: id,
        error,
      });
    }
  }

  /**
   * Rebuilds the index when the subscriptions' version moved (asked at most once a second).
   * Events arriving meanwhile wait for the same rebuild rather than match the old index.
   */
  private async refresh(): Promise<void> {
    if (Date.now() - this.checkedAt < VERSION_CHECK_MS) return;
    this.refreshing ??= this.reload().finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  private async reload(): Promise<void> {
    const askedAt = Date.now();
    const version = await this.deps.subscriptions.version();
    // The version is bumped after each write; a bump lost to a failure is caught up here.
    if (version === this.version && askedAt - this.listedAt < RELIST_MS) {
      this.checkedAt = askedAt;
      return;
    }
    const all = await this.deps.subscriptions.list();
    const index = createPatternIndex<string>();
    for (const stored of all) {
      // Paused on request: events are not queued. Paused as failing: they are queued and
      // wait (see tryAttempt), so a receiver's outage loses nothing once it is resumed.
      const { status, pausedBecause } = stored.subscription;
      if (status !== "active" && pausedBecause !== "failing") continue;
      try {
        index.add(stored.subscription.id, stored.subscription.pattern);
      } catch (error) {
        // Validated when created: a pattern refused now was stored by a newer matcher.
        this.log.error("a stored subscription's pattern is refused", {
          subscriptionId: stored.subscription.id,
          error,
        });
      }
    }
    this.index = index;
    this.version = version;
    this.checkedAt = askedAt;
    this.listedAt = askedAt;
  }
}

const settledKey = (delivery: Delivery) => `${delivery.subscriptionId}\n${delivery.eventKey}`;

function dead(delivery: Delivery, at: Date, reason: string): Delivery {
  const { nextAttemptAt: _, ...rest } = delivery;
  return {
    ...rest,
    status: "dead",
    deadAt: at.toISOString(),
    lastError: delivery.lastError ?? { at: at.toISOString(), message: reason },
  };
}
