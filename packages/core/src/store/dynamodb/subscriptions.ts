import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type Delivery,
  delivery,
  type Subscription,
  type SubscriptionSecrets,
  subscription,
  subscriptionSecrets,
} from "@toolbus/wire/model/subscription";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type { DeliveryStore, StoredSubscription, SubscriptionStore } from "../../ports";
import {
  type DynamoStoreOptions,
  guard,
  isConditionFailure,
  parseStored,
  queryAll,
  withoutKeys,
} from "./client";
import { queryIndexed } from "./indexed";
import {
  anySubscription,
  SUBSCRIPTION_SORT_PREFIX,
  SUBSCRIPTIONS_PARTITION,
} from "./subscription-presence";

/**
 * Every subscription in one partition, read with a consistent query: a fan-out that sees the
 * version move must also see the write that moved it (an index would lag behind it). The
 * partition is read whole only when the version moves.
 */
const PARTITION = SUBSCRIPTIONS_PARTITION;
const VERSION_KEY = { pk: PARTITION, sk: "VERSION" };
/** gsi4 partition of deliveries waiting for their next attempt (the retry driver's queue). */
const DELIVERY_DUE_PARTITION = "DELIVERY_DUE";
/** A delivery item a retry delivered is kept this long, then DynamoDB's TTL removes it. */
const DELIVERED_KEPT_SECONDS = 7 * 24 * 3600;

const subscriptionKey = (id: string) => ({ pk: PARTITION, sk: `${SUBSCRIPTION_SORT_PREFIX}${id}` });
const deliveryKey = (subscriptionId: string, eventKey: string, replayId?: string) => ({
  pk: `SUBSCRIPTION#${subscriptionId}`,
  sk: replayId ? `DELIVERY#${eventKey}#REPLAY#${replayId}` : `DELIVERY#${eventKey}`,
});

function storedSubscription(item: Record<string, unknown>): StoredSubscription {
  const { secrets, ...rest } = withoutKeys(item);
  return {
    subscription: parseStored(subscription, rest, "subscription"),
    secrets: parseStored(subscriptionSecrets, JSON.parse(String(secrets)), "subscription secrets"),
  };
}

/**
 * Subscriptions: SUBSCRIPTIONS / SUB#<id>, with their signing secrets in the item (a webhook
 * signature is an HMAC: the sender needs the secret itself).
 * Every write bumps SUBSCRIPTIONS / VERSION, so the fan-out rebuilds its index only when
 * something changed.
 */
export class DynamoSubscriptionStore implements SubscriptionStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async create(created: Subscription, secrets: SubscriptionSecrets): Promise<void> {
    const { client, tableName } = this.#options;
    await guard("subscriptions.create", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: this.#item(created, secrets),
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
    await this.#bump();
  }

  async get(id: string): Promise<StoredSubscription | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("subscriptions.get", tableName, () =>
      client.send(
        new GetCommand({ TableName: tableName, Key: subscriptionKey(id), ConsistentRead: true }),
      ),
    );
    return Item && storedSubscription(Item);
  }

  async list(ownerId?: string): Promise<StoredSubscription[]> {
    const { client, tableName } = this.#options;
    const items = await guard("subscriptions.list", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        KeyConditionExpression: "pk = :partition AND begins_with(sk, :sub)",
        ...(ownerId === undefined
          ? {}
          : {
              FilterExpression: "#owner.#id = :owner",
              ExpressionAttributeNames: { "#owner": "owner", "#id": "id" },
            }),
        ExpressionAttributeValues: {
          ":partition": PARTITION,
          ":sub": SUBSCRIPTION_SORT_PREFIX,
          ...(ownerId === undefined ? {} : { ":owner": ownerId }),
        },
        ConsistentRead: true,
      }),
    );
    return items.map(storedSubscription);
  }

  /**
   * Replaces a subscription's state (status, streak, secrets) if its revision is still
   * `expected.revision`; ConflictError when it moved on, NotFoundError when it is gone.
   */
  async replace(next: Subscription, secrets: SubscriptionSecrets): Promise<StoredSubscription> {
    const { client, tableName } = this.#options;
    const stored = { ...next, revision: next.revision + 1 };
    try {
      await guard("subscriptions.replace", tableName, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: this.#item(stored, secrets),
            ConditionExpression: "revision = :revision",
            ExpressionAttributeValues: { ":revision": next.revision },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const now = await this.get(next.id);
      if (!now) throw new NotFoundError(`Subscription ${next.id} does not exist.`);
      throw new ConflictError(`Subscription ${next.id} changed meanwhile; read it and retry.`, {
        details: { revision: now.subscription.revision },
      });
    }
    await this.#bump();
    return { subscription: stored, secrets };
  }

  /**
   * Counts one delivery attempt's outcome without a read: a success resets the streak, a
   * failure adds one. The new streak comes back, so the caller can pause a failing one.
   */
  async countAttempt(id: string, ok: boolean): Promise<number | undefined> {
    const { client, tableName } = this.#options;
    try {
      const { Attributes } = await guard("subscriptions.countAttempt", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: subscriptionKey(id),
            UpdateExpression: ok ? "SET failureStreak = :zero" : "ADD failureStreak :one",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: ok ? { ":zero": 0 } : { ":one": 1 },
            ReturnValues: "UPDATED_NEW",
          }),
        ),
      );
      return Number(Attributes?.failureStreak ?? 0);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async remove(id: string): Promise<boolean> {
    const { client, tableName } = this.#options;
    const { Attributes } = await guard("subscriptions.remove", tableName, () =>
      client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: subscriptionKey(id),
          ReturnValues: "ALL_OLD",
        }),
      ),
    );
    if (Attributes) await this.#bump();
    return Attributes !== undefined;
  }

  /** Moves on with every write; 0 before the first. */
  async version(): Promise<number> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("subscriptions.version", tableName, () =>
      client.send(new GetCommand({ TableName: tableName, Key: VERSION_KEY, ConsistentRead: true })),
    );
    return Number(Item?.version ?? 0);
  }

  async any(): Promise<boolean> {
    return anySubscription(this.#options);
  }

  #item(stored: Subscription, secrets: SubscriptionSecrets): Record<string, unknown> {
    return {
      ...subscriptionKey(stored.id),
      ...stored,
      secrets: JSON.stringify(secrets),
    };
  }

  async #bump(): Promise<void> {
    const { client, tableName } = this.#options;
    await guard("subscriptions.bump", tableName, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: VERSION_KEY,
          UpdateExpression: "ADD version :one",
          ExpressionAttributeValues: { ":one": 1 },
        }),
      ),
    );
  }
}

const storedDelivery = (item: Record<string, unknown>): Delivery =>
  parseStored(delivery, withoutKeys(item), "delivery");

/** A pending delivery's place on the due index: its next attempt time, then who it is. */
const dueSortKey = (stored: Delivery, nextAttemptAt: string) =>
  `${nextAttemptAt}#${stored.subscriptionId}#${stored.eventKey}${stored.replayId ? `#${stored.replayId}` : ""}`;

/** Dead letters are kept this long (redrive them before), then DynamoDB's TTL removes them. */
const DEAD_KEPT_SECONDS = 30 * 24 * 3600;

/**
 * Where a delivery is indexed: due (gsi4, keys only, on the gsi2pk / gsi2sk attributes, by
 * time), dead (gsi1, by subscription), or nowhere.
 */
function deliveryIndexKeys(stored: Delivery): Record<string, unknown> {
  if (stored.status === "pending" && stored.nextAttemptAt) {
    return {
      gsi2pk: DELIVERY_DUE_PARTITION,
      gsi2sk: dueSortKey(stored, stored.nextAttemptAt),
    };
  }
  if (stored.status === "dead" && stored.deadAt) {
    return {
      gsi1pk: `DEAD#${stored.subscriptionId}`,
      gsi1sk: `${stored.deadAt}#${stored.eventKey}`,
    };
  }
  return {};
}

/**
 * Deliveries that need bookkeeping: SUBSCRIPTION#<id> / DELIVERY#<event key>, at most one per
 * event and subscription, written only once an event's first attempt has failed (or could not
 * be made); a first attempt that succeeds leaves no item. The retry schedule is the item itself:
 * a pending delivery sits on gsi4 under DELIVERY_DUE by its next attempt time, so the retry
 * driver finds what is due with one query, however long the wait (SQS delays stop at 15
 * minutes).
 */
export class DynamoDeliveryStore implements DeliveryStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  /** False when this event already has a delivery item for this subscription. */
  async create(created: Delivery): Promise<boolean> {
    const { client, tableName } = this.#options;
    try {
      await guard("deliveries.create", tableName, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: this.#item(created),
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async get(subscriptionId: string, eventKey: string): Promise<Delivery | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("deliveries.get", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: deliveryKey(subscriptionId, eventKey),
          ConsistentRead: true,
        }),
      ),
    );
    return Item && storedDelivery(Item);
  }

  /**
   * Stores the outcome of an attempt if the delivery is still as `previous` left it (same
   * attempts count): two drivers racing over one due delivery record one attempt.
   */
  async save(next: Delivery, previousAttempts: number): Promise<boolean> {
    const { client, tableName } = this.#options;
    try {
      await guard("deliveries.save", tableName, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: this.#item(next),
            ConditionExpression: "attempts = :attempts",
            ExpressionAttributeValues: { ":attempts": previousAttempts },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Takes a due delivery for one attempt: moves its next attempt to `until` if it is still
   * pending, unattempted since it was read, and due when it was read. The claimed delivery, or
   * undefined when another run took it (or it changed) first.
   */
  async claim(due: Delivery, until: string): Promise<Delivery | undefined> {
    const { client, tableName } = this.#options;
    try {
      const { Attributes } = await guard("deliveries.claim", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: deliveryKey(due.subscriptionId, due.eventKey, due.replayId),
            UpdateExpression: "SET nextAttemptAt = :until, gsi2sk = :sk",
            ConditionExpression:
              "#status = :pending AND attempts = :attempts AND nextAttemptAt = :seen",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":until": until,
              ":sk": dueSortKey(due, until),
              ":pending": "pending",
              ":attempts": due.attempts,
              ":seen": due.nextAttemptAt ?? "",
            },
            ReturnValues: "ALL_NEW",
          }),
        ),
      );
      return Attributes && storedDelivery(Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /**
   * Pending deliveries whose next attempt is before `before`, soonest first (gsi4's keys, then
   * the items as they are now: one claimed, delivered or dead since the index saw it is left
   * out).
   */
  async listDue(before: string, limit = 100): Promise<Delivery[]> {
    const items = await queryIndexed(
      this.#options,
      "deliveries.listDue",
      DELIVERY_DUE_PARTITION,
      before,
      limit,
    );
    return items.map(storedDelivery);
  }

  /** A subscription's dead letters, newest first, paged. */
  async listDead(
    subscriptionId: string,
    options: { limit: number; cursor?: string },
  ): Promise<{ deliveries: Delivery[]; cursor: string | null }> {
    const { client, tableName } = this.#options;
    const partition = `DEAD#${subscriptionId}`;
    const after = options.cursor === undefined ? undefined : decodeDeadCursor(options.cursor);
    const page = await guard("deliveries.listDead", tableName, () =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: "gsi1",
          KeyConditionExpression: "gsi1pk = :dead",
          ExpressionAttributeValues: { ":dead": partition },
          ScanIndexForward: false,
          Limit: options.limit,
          ...(after ? { ExclusiveStartKey: { ...after, gsi1pk: partition } } : {}),
        }),
      ),
    );
    const items = page.Items ?? [];
    const last = items.at(-1);
    return {
      deliveries: items.map(storedDelivery),
      cursor:
        page.LastEvaluatedKey && last
          ? Buffer.from(
              JSON.stringify([String(last.pk), String(last.sk), String(last.gsi1sk)]),
            ).toString("base64url")
          : null,
    };
  }

  #item(stored: Delivery): Record<string, unknown> {
    return {
      ...deliveryKey(stored.subscriptionId, stored.eventKey, stored.replayId),
      ...stored,
      ...deliveryIndexKeys(stored),
      ...(stored.status === "delivered"
        ? { expiresAt: Math.floor(Date.now() / 1000) + DELIVERED_KEPT_SECONDS }
        : stored.status === "dead" && stored.deadAt
          ? { expiresAt: Math.floor(Date.parse(stored.deadAt) / 1000) + DEAD_KEPT_SECONDS }
          : {}),
    };
  }
}

/** A dead-letter page cursor: the last item's keys, checked for shape before use. */
function decodeDeadCursor(cursor: string): { pk: string; sk: string; gsi1sk: string } {
  const invalid = () =>
    new ValidationError("The cursor is not valid; use one returned by a previous read.");
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  // Key parts DynamoDB would refuse (empty, over 1,024 bytes) are the caller's mistake, not a 500.
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    !parsed.every(
      (part) => typeof part === "string" && part.length > 0 && Buffer.byteLength(part) <= 1024,
    )
  ) {
    throw invalid();
  }
  const [pk, sk, gsi1sk] = parsed as [string, string, string];
  if (!pk.startsWith("SUBSCRIPTION#") || !sk.startsWith("DELIVERY#")) throw invalid();
  return { pk, sk, gsi1sk };
}
