import { randomBytes } from "node:crypto";
import { compilePattern } from "@toolbus/pattern";
import type { Principal } from "@toolbus/wire/model/call";
import type { RunEvent } from "@toolbus/wire/model/events";
import type {
  Delivery,
  Subscription,
  SubscriptionRequest,
  SubscriptionTarget,
} from "@toolbus/wire/model/subscription";
import { deliveryBody } from "@toolbus/wire/webhooks/delivery-body";
import { newWebhookSecret } from "@toolbus/wire/webhooks/signature";
import type { StageConfig } from "../../config";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type {
  DeliveryStore,
  EventLog,
  EventStream,
  StoredSubscription,
  SubscriptionStore,
} from "../../ports";
import { mayActFor, mayActForOthers } from "../access";
import { envelopeOf } from "../events/envelope";
import { parseEventPattern } from "../events/pattern";
import type { DeliveryRule } from "./delivery-rule";

/** Most events one replay reads from a run's log. */
const MAX_REPLAYED_EVENTS = 10_000;

/** A rotated secret still signs (beside the new one) this long, so receivers can switch over. */
const PREVIOUS_SECRET_KEPT_MS = 24 * 3600 * 1000;

export interface SubscriptionServiceDeps {
  subscriptions: SubscriptionStore;
  deliveries: DeliveryStore;
  /** The run event logs a replay reads. */
  events?: Pick<EventLog, "read">;
  /** The stage's event stream a replay by time window reads. */
  stream?: EventStream;
  config: StageConfig;
  /** Told after every write, so a fan-out in this process sees it on the next event. */
  onChange?: () => void;
  /**
   * The bus rule that hands events to the fan-out, on only while a subscription exists
   * (delivery-rule.ts): switched on here as one is made, off only by the sweeper. Absent, the
   * rule is left as the deployment made it.
   */
  rule?: Pick<DeliveryRule, "subscribed">;
  now?: () => Date;
}

/**
 * Subscriptions on the API side: who may see and change which (an owner its own, an admin
 * any), what a pattern and a target must be, secrets shown once and rotated, dead letters
 * listed and redriven. The fan-out (fan-out.ts) delivers.
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
    // On before the answer: an event published once the caller has its id is delivered. A
    // rule that cannot be switched on takes the subscription back out, and the create fails.
    await this.deps.rule?.subscribed(async () => {
      await subscriptions.remove(subscription.id);
      this.deps.onChange?.();
    });
    return { subscription, secret };
  }

  async list(principal: Principal): Promise<Subscription[]> {
    const all = await this.deps.subscriptions.list(
      mayActForOthers(this.deps.config, principal) ? undefined : principal.id,
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

  /**
   * The rule is left on even when this was the last subscription: the sweeper switches it off
   * within a minute (delivery-rule.ts), so the API never races a create with a disable.
   */
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
   * Sends again the logged events that the subscription's pattern matches, of one run (from its
   * log) or of a time window (from the stage's stream, by when the stage recorded them), marked
   * as a replay (`replay: true` in the body; the same `webhook-id` as the first time, so a
   * receiver that has them can drop them). They are queued due now: the next retry run sends
   * them. At most MAX_REPLAYED_EVENTS events are read; `complete` says whether that was all.
   */
  async replay(
    principal: Principal,
    id: string,
    request: ReplayRequest,
  ): Promise<{ replayId: string; queued: number; events: number; complete: boolean }> {
    const stored = await this.owned(principal, id);
    const source = this.replaySource(request);
    const pattern = compilePattern(stored.subscription.pattern);
    const replayId = randomBytes(8).toString("hex");
    const at = this.now().toISOString();
    let seen = 0;
    let queued = 0;
    for await (const logged of source) {
      if (seen >= MAX_REPLAYED_EVENTS) return { replayId, queued, events: seen, complete: false };
      seen++;
      if (!pattern.matches(envelopeOf(logged))) continue;
      const made = await this.deps.deliveries.create({
        subscriptionId: id,
        eventKey: logged.eventKey,
        replayId,
        detailType: logged.detailType,
        status: "pending",
        body: deliveryBody(logged, true),
        attempts: 0,
        firstAttemptAt: at,
        nextAttemptAt: at,
      });
      if (made) queued++;
    }
    return { replayId, queued, events: seen, complete: true };
  }

  /** The events a replay reads: a run's log, or the stream's places within the window. */
  private replaySource(request: ReplayRequest): AsyncIterable<RunEvent> {
    const { events, stream } = this.deps;
    if ("runId" in request) {
      if (!events)
        throw new ValidationError("Replay needs the run event logs, which are not here.");
      return runEvents(events, request.runId);
    }
    if (!stream)
      throw new ValidationError("Replay by time needs the event stream, which is not here.");
    const from = Date.parse(request.from);
    const to =
      request.to === undefined ? Date.parse(this.now().toISOString()) : Date.parse(request.to);
    if (!(from <= to)) {
      throw new ValidationError("A replay's window must end after it starts.", {
        details: [{ path: "to", message: "must not be before from" }],
      });
    }
    return windowEvents(stream, from, to);
  }

  /** The subscription if the principal may manage it; 404 otherwise, so ids do not leak. */
  private async owned(principal: Principal, id: string): Promise<StoredSubscription> {
    const stored = await this.deps.subscriptions.get(id);
    if (!stored || !mayActFor(this.deps.config, principal, stored.subscription.owner)) {
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
    return parseEventPattern(pattern, "subscription's pattern").text;
  }

  /**
   * A webhook must be HTTPS (plain HTTP only to a host the stage exempts from the SSRF guard,
   * such as a local receiver); a bus or queue must be on the stage's allow-list, since the
   * subscriptions function's role may post there.
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

/** What to replay: one run's events, or those the stage recorded within a time window. */
export type ReplayRequest = { runId: string } | { from: string; to?: string };

async function* runEvents(events: Pick<EventLog, "read">, runId: string) {
  let cursor: string | undefined;
  for (;;) {
    const page = await events.read(runId, { limit: 100, ...(cursor ? { cursor } : {}) });
    yield* page.events;
    if (page.events.length === 0 || !page.cursor) return;
    cursor = page.cursor;
  }
}

async function* windowEvents(stream: EventStream, from: number, to: number) {
  let after = (await stream.placeAt(new Date(from))) - 1;
  // The head when the replay starts: events recorded meanwhile are not part of the window.
  const end = await stream.head();
  while (after < end) {
    const page = await stream.read(after, Math.min(500, end - after));
    for (const entry of page.entries) {
      if (Date.parse(entry.recordedAt) > to) return;
      yield entry.event;
    }
    if (page.through <= after) return;
    after = page.through;
  }
}
