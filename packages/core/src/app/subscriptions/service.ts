import { randomBytes } from "node:crypto";
import { roleAtLeast, type StageConfig } from "../../config";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type { Principal } from "../../model/call";
import type {
  Delivery,
  Subscription,
  SubscriptionRequest,
  SubscriptionTarget,
} from "../../model/subscription";
import { compilePattern, InvalidEventPatternError } from "../../pattern";
import type { DeliveryStore, EventLog, StoredSubscription, SubscriptionStore } from "../../ports";
import { newWebhookSecret } from "../../subscriptions/webhook-signature";
import { canonicalJson } from "../../util/canonical-json";
import { EVENT_SOURCE } from "../../wiring";

/** The longest pattern, as canonical JSON text (EventBridge allows a rule no more). */
export const MAX_PATTERN_CHARS = 4096;

/** Most events one replay reads from a run's log. */
export const MAX_REPLAYED_EVENTS = 10_000;

/** A rotated secret still signs (beside the new one) this long, so receivers can switch over. */
export const PREVIOUS_SECRET_KEPT_MS = 24 * 3600 * 1000;

export interface SubscriptionServiceDeps {
  subscriptions: SubscriptionStore;
  deliveries: DeliveryStore;
  /** The run event logs a replay reads. */
  events?: Pick<EventLog, "read">;
  config: StageConfig;
  /** Told after every write, so a dispatcher in this process sees it on the next event. */
  onChange?: () => void;
  now?: () => Date;
}

/** What a subscriber sees: never the secret (it is shown once, at creation and rotation). */
export type SubscriptionView = Subscription;

/**
 * Subscriptions on the API side: who may see and change which (an owner its own, an admin
 * any), what a pattern and a target must be, secrets shown once and rotated, dead letters
 * listed and redriven. The dispatcher (dispatcher.ts) delivers.
 */
export class SubscriptionService {
  private readonly now: () => Date;

  constructor(private readonly deps: SubscriptionServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(
    owner: Principal,
    request: SubscriptionRequest,
  ): Promise<{ subscription: Subscription; secret: string }> {
    const pattern = this.checkPattern(request.pattern);
    this.checkTarget(request.target);
    const { subscriptions, config } = this.deps;
    const owned = await subscriptions.list(owner.id);
    if (owned.length >= config.subscriptions.maxPerOwner) {
      throw new ConflictError(
        `A key may own at most ${config.subscriptions.maxPerOwner} subscriptions; delete one first.`,
      );
    }
    const at = this.now().toISOString();
    const subscription: Subscription = {
      id: `sub_${randomBytes(12).toString("hex")}`,
      name: request.name,
      owner: { id: owner.id, role: owner.role },
      pattern,
      target: request.target,
      status: "active",
      failureStreak: 0,
      createdAt: at,
      updatedAt: at,
      revision: 1,
    };
    const secret = newWebhookSecret();
    await subscriptions.create(subscription, { current: secret });
    this.deps.onChange?.();
    return { subscription, secret };
  }

  async list(principal: Principal): Promise<Subscription[]> {
    const all = await this.deps.subscriptions.list(
      this.isAdmin(principal) ? undefined : principal.id,
    );
    return all.map((stored) => stored.subscription);
  }

  async get(principal: Principal, id: string): Promise<Subscription> {
    return (await this.owned(principal, id)).subscription;
  }

  pause(principal: Principal, id: string): Promise<Subscription> {
    return this.change(principal, id, (s) => ({
      ...s,
      status: "paused",
      pausedBecause: "requested",
    }));
  }

  /** Active again, with a clean failure streak: deliveries left pending go on. */
  resume(principal: Principal, id: string): Promise<Subscription> {
    return this.change(principal, id, ({ pausedBecause: _, ...s }) => ({
      ...s,
      status: "active",
      failureStreak: 0,
    }));
  }

  async remove(principal: Principal, id: string): Promise<void> {
    await this.owned(principal, id);
    await this.deps.subscriptions.remove(id);
    this.deps.onChange?.();
  }

  /** A new secret, shown once; the old one keeps signing beside it for PREVIOUS_SECRET_KEPT_MS. */
  async rotateSecret(
    principal: Principal,
    id: string,
  ): Promise<{ subscription: Subscription; secret: string }> {
    const stored = await this.owned(principal, id);
    const secret = newWebhookSecret();
    const now = this.now();
    const next = await this.deps.subscriptions.replace(
      { ...stored.subscription, updatedAt: now.toISOString() },
      {
        current: secret,
        previous: stored.secrets.current,
        previousUntil: new Date(now.getTime() + PREVIOUS_SECRET_KEPT_MS).toISOString(),
      },
    );
    return { subscription: next.subscription, secret };
  }

  async failures(
    principal: Principal,
    id: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ deliveries: Delivery[]; cursor: string | null }> {
    await this.owned(principal, id);
    return this.deps.deliveries.listDead(id, page);
  }

  /**
   * Dead letters go back on the retry schedule, due now, with a fresh retry window: the same
   * webhook-id, so a receiver that did get one after all drops it.
   */
  async redrive(principal: Principal, id: string, eventKeys?: readonly string[]): Promise<number> {
    await this.owned(principal, id);
    const { deliveries } = this.deps;
    const dead: Delivery[] = [];
    if (eventKeys) {
      for (const key of eventKeys) {
        const found = await deliveries.get(id, key);
        if (found?.status === "dead") dead.push(found);
      }
    } else {
      let cursor: string | undefined;
      do {
        const page = await deliveries.listDead(id, { limit: 100, ...(cursor ? { cursor } : {}) });
        dead.push(...page.deliveries);
        cursor = page.cursor ?? undefined;
      } while (cursor);
    }
    const at = this.now().toISOString();
    let redriven = 0;
    for (const letter of dead) {
      const { deadAt: _, ...rest } = letter;
      const saved = await deliveries.save(
        { ...rest, status: "pending", firstAttemptAt: at, nextAttemptAt: at },
        letter.attempts,
      );
      if (saved) redriven++;
    }
    return redriven;
  }

  /**
   * Sends a run's logged events that the subscription's pattern matches again, marked as a
   * replay (`replay: true` in the body; the same `webhook-id` as the first time, so a receiver
   * that has them can drop them). They are queued due now: the next retry run sends them.
   */
  async replay(
    principal: Principal,
    id: string,
    request: { runId: string },
  ): Promise<{ replayId: string; queued: number; events: number }> {
    const stored = await this.owned(principal, id);
    const { events } = this.deps;
    if (!events) throw new ValidationError("Replay needs the run event logs, which are not here.");
    const pattern = compilePattern(stored.subscription.pattern);
    const replayId = randomBytes(8).toString("hex");
    const at = this.now().toISOString();
    let cursor: string | undefined;
    let seen = 0;
    let queued = 0;
    do {
      const page = await events.read(request.runId, { limit: 100, ...(cursor ? { cursor } : {}) });
      for (const logged of page.events) {
        seen++;
        const envelope = {
          version: "0",
          id: logged.eventKey,
          source: EVENT_SOURCE,
          "detail-type": logged.detailType,
          time: logged.occurredAt,
          resources: [],
          detail: logged.detail,
        };
        if (!pattern.matches(envelope)) continue;
        const made = await this.deps.deliveries.create({
          subscriptionId: id,
          eventKey: logged.eventKey,
          replayId,
          detailType: logged.detailType,
          status: "pending",
          body: JSON.stringify({
            type: logged.detailType,
            timestamp: logged.occurredAt,
            data: logged.detail,
            replay: true,
          }),
          attempts: 0,
          firstAttemptAt: at,
          nextAttemptAt: at,
        });
        if (made) queued++;
      }
      const more = page.events.length > 0 && seen < MAX_REPLAYED_EVENTS;
      cursor = more ? page.cursor : undefined;
    } while (cursor);
    return { replayId, queued, events: seen };
  }

  private isAdmin(principal: Principal): boolean {
    return roleAtLeast(this.deps.config, principal.role, this.deps.config.permissions.admin);
  }

  /** The subscription if the principal may manage it; 404 otherwise, so ids do not leak. */
  private async owned(principal: Principal, id: string): Promise<StoredSubscription> {
    const stored = await this.deps.subscriptions.get(id);
    if (!stored || (stored.subscription.owner.id !== principal.id && !this.isAdmin(principal))) {
      throw new NotFoundError(`Subscription ${id} does not exist.`);
    }
    return stored;
  }

  private async change(
    principal: Principal,
    id: string,
    next: (subscription: Subscription) => Subscription,
  ): Promise<Subscription> {
    const stored = await this.owned(principal, id);
    const changed = next(stored.subscription);
    const saved = await this.deps.subscriptions.replace(
      { ...changed, updatedAt: this.now().toISOString() },
      stored.secrets,
    );
    this.deps.onChange?.();
    return saved.subscription;
  }

  /** The pattern as canonical JSON text, or a 400 naming what is wrong with it. */
  private checkPattern(pattern: SubscriptionRequest["pattern"]): string {
    try {
      const parsed = typeof pattern === "string" ? JSON.parse(pattern) : pattern;
      compilePattern(parsed);
      const text = canonicalJson(parsed);
      // EventBridge's own limit for a rule's pattern; the object form is bounded here too.
      if (text.length > MAX_PATTERN_CHARS) {
        throw new ValidationError("The subscription's pattern is too long.", {
          details: [
            { path: "pattern", message: `at most ${MAX_PATTERN_CHARS} characters as JSON` },
          ],
        });
      }
      return text;
    } catch (error) {
      if (error instanceof InvalidEventPatternError || error instanceof SyntaxError) {
        throw new ValidationError("The subscription's pattern is not valid.", {
          details: [{ path: "pattern", message: error.message }],
        });
      }
      throw error;
    }
  }

  /**
   * A webhook must be HTTPS (plain HTTP only to a host the stage exempts from the SSRF guard,
   * such as a local receiver); a bus or queue must be on the stage's allow-list, since the
   * dispatcher's role may post there.
   */
  private checkTarget(target: SubscriptionTarget): void {
    const { config } = this.deps;
    if (target.kind === "webhook") {
      const url = new URL(target.url);
      const exempt = config.outbound.allowHosts.includes(url.hostname);
      if (url.protocol !== "https:" && !exempt) {
        throw new ValidationError("A webhook's URL must be https.", {
          details: [{ path: "target.url", message: "must be https" }],
        });
      }
      return;
    }
    const name = target.kind === "eventbridge" ? target.busArn : target.queueUrl;
    if (!config.subscriptions.allowTargets.includes(name)) {
      throw new ValidationError(`This stage does not allow ${target.kind} target ${name}.`, {
        details: [
          {
            path: target.kind === "eventbridge" ? "target.busArn" : "target.queueUrl",
            message: "not in the stage's subscriptions.allowTargets",
          },
        ],
      });
    }
  }
}
