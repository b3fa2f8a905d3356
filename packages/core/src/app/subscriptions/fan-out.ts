import { createPatternIndex, type PatternIndex } from "@toolbus/pattern";
import { occurredAtOf } from "@toolbus/wire/model/events";
import type {
  Delivery,
  SubscriptionSecrets,
  SubscriptionTarget,
} from "@toolbus/wire/model/subscription";
import { deliveryBody } from "@toolbus/wire/webhooks/delivery-body";
import * as z from "zod";
import type { StageConfig } from "../../config";
import { fallbackLogger, type Logger } from "../../observability/log";
import type { DeliveryStore, SubscriptionStore } from "../../ports";
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
/** How long one retry run starts new attempts (a webhook may then take its 15 s timeout). */
const RETRY_BUDGET_MS = 25_000;
/** A paused subscription's due deliveries are looked at again this much later. */
const PAUSED_RECHECK_MS = 60_000;

/**
 * Subscription delivery: each Toolbus event fans out to every subscription whose pattern
 * matches it. (Not the call dispatcher of app/calls/dispatch.ts, which hands one call to its
 * tool's handler.) One instance serves every subscription: each event is matched against all
 * active ones at once through a pattern index (cost by the event, not by how many
 * subscriptions there are); each match becomes a delivery item (one per event and
 * subscription, so a redelivered event is sent once) that is attempted at once. A failed
 * attempt is scheduled again in the item itself (`retryDue` picks up what is due) until the
 * stage's retry window closes: then it is a dead letter, listed under the subscription's
 * failures and redrivable. A subscription whose attempts fail `pauseAfterFailures` times in a
 * row is paused as failing.
 */
export class SubscriptionFanOut {
  private readonly now: () => Date;
  private readonly log: Logger;
  private index: PatternIndex<string> = createPatternIndex();
  private version = -1;
  private checkedAt = 0;
  private listedAt = 0;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly deps: SubscriptionFanOutDeps) {
    this.now = deps.now ?? (() => new Date());
    this.log = deps.log ?? fallbackLogger();
  }

  /** Matches one event and delivers it to every matching active subscription; how many matched. */
  async dispatch(event: unknown): Promise<number> {
    const parsed = toolbusEvent.safeParse(event);
    if (!parsed.success) {
      this.log.warn("not a Toolbus event: nothing to deliver", {
        issues: parsed.error.issues.slice(0, 5).map((issue) => issue.message),
      });
      return 0;
    }
    await this.refresh();
    // The event as the bus delivered it: patterns may name any envelope field.
    const matched = this.index.match(event);
    const at = this.now().toISOString();
    const body = deliveryBody({
      detailType: parsed.data["detail-type"],
      occurredAt: occurredAtOf(parsed.data.detail, parsed.data.time ?? at),
      detail: parsed.data.detail,
    });
    await inPool(matched, CONCURRENT_ATTEMPTS, async (id) => {
      const created: Delivery = {
        subscriptionId: id,
        eventKey: parsed.data.detail.eventKey,
        detailType: parsed.data["detail-type"],
        status: "pending",
        body,
        attempts: 0,
        firstAttemptAt: at,
        // Attempted right here: the retry driver takes it only if this attempt never ends.
        nextAttemptAt: new Date(Date.parse(at) + ATTEMPT_LEASE_MS).toISOString(),
      };
      if (await this.deps.deliveries.create(created)) await this.attempt(created);
    });
    return matched.length;
  }

  /**
   * Attempts the deliveries that are due. Each subscription's are taken in order, one at a
   * time, and its turn ends at its first failure (the rest wait for the next run): a receiver
   * that is down or hangs costs one attempt per run, not the run. Up to CONCURRENT_ATTEMPTS
   * subscriptions at once; no attempt starts after `budgetMs`, so a run ends within its
   * function's timeout. How many were attempted.
   */
  async retryDue(limit = 500, budgetMs = RETRY_BUDGET_MS): Promise<number> {
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
   * One attempt; whether the target took it. A failure of its own (the store, a bug) is
   * logged, not passed to the others.
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
    const { deliveries, subscriptions, send, config } = this.deps;
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
    const outcome = await send(stored.subscription.target, delivery, stored.secrets).catch(
      (error: unknown): AttemptOutcome => ({
        ok: false,
        retryable: true,
        message: error instanceof Error ? error.message : String(error),
      }),
    );
    const attempts = delivery.attempts + 1;
    const at = this.now();
    if (outcome.ok) {
      const { nextAttemptAt: _, lastError: __, ...rest } = delivery;
      const saved = await deliveries.save(
        { ...rest, status: "delivered", attempts, deliveredAt: at.toISOString() },
        delivery.attempts,
      );
      if (saved) await subscriptions.countAttempt(delivery.subscriptionId, true);
      return true;
    }
    const lastError = {
      at: at.toISOString(),
      message: outcome.message.slice(0, 500),
      ...(outcome.status === undefined ? {} : { status: outcome.status }),
    };
    const delay = retryDelayMs(attempts, outcome.retryAfterMs);
    const windowEnds =
      Date.parse(delivery.firstAttemptAt) + config.subscriptions.retryWindowHours * 3600 * 1000;
    const next =
      outcome.retryable && at.getTime() + delay <= windowEnds
        ? {
            ...delivery,
            attempts,
            lastError,
            nextAttemptAt: new Date(at.getTime() + delay).toISOString(),
          }
        : dead({ ...delivery, attempts, lastError }, at, lastError.message);
    // Another attempt was recorded meanwhile: that one counts, not this one.
    if (!(await deliveries.save(next, delivery.attempts))) return false;
    this.log.warn("a delivery failed", {
      subscriptionId: delivery.subscriptionId,
      eventKey: delivery.eventKey,
      attempts,
      status: outcome.status,
      retrying: next.status === "pending",
    });
    const streak = await subscriptions.countAttempt(delivery.subscriptionId, false);
    if (
      streak !== undefined &&
      (outcome.gone || streak >= config.subscriptions.pauseAfterFailures)
    ) {
      await this.pauseFailing(delivery.subscriptionId, streak);
    }
    return false;
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

function dead(delivery: Delivery, at: Date, reason: string): Delivery {
  const { nextAttemptAt: _, ...rest } = delivery;
  return {
    ...rest,
    status: "dead",
    deadAt: at.toISOString(),
    lastError: delivery.lastError ?? { at: at.toISOString(), message: reason },
  };
}
