import {
  DeleteCommand,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { McpSubscribeOutcome, McpSubscription, McpSubscriptions } from "../../ports";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard, isConditionFailure } from "./client";
import { mcpSubscriptionKey, mcpSubscriptionPartition } from "./items";

type Item = Record<string, NativeAttributeValue>;

export interface DynamoMcpSubscriptionsSettings {
  /** How long a subscription lasts after it was last made, seconds (default 1 hour). */
  ttlSeconds?: number;
  /** Most subscriptions one caller holds (default 100). */
  maxPerPrincipal?: number;
  /** Clock, epoch ms. */
  now?: () => number;
}

/** A subscription lasts an hour after it was last made: subscribing again renews it. */
export const MCP_SUBSCRIPTION_TTL_SECONDS = 3_600;
/** Most subscriptions one caller (key) holds at once. */
export const MAX_MCP_SUBSCRIPTIONS = 100;
/** Items read per page when counting or listing a caller's subscriptions. */
const PAGE = 200;

/**
 * `/mcp` resource subscriptions in the stage's table (items.ts has the layout): one item per
 * caller and URI, expiring `ttlSeconds` after it was last made. An expired item DynamoDB has
 * not deleted yet counts for nothing. The bound is checked against the caller's live items
 * before a new one is written: two subscriptions made at the same moment may both pass it,
 * so a caller holds at most a few over it, never more than it can make at once.
 */
export class DynamoMcpSubscriptions implements McpSubscriptions {
  readonly #options: DynamoStoreOptions;
  readonly #ttlSeconds: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: DynamoStoreOptions, settings: DynamoMcpSubscriptionsSettings = {}) {
    this.#options = options;
    this.#ttlSeconds = settings.ttlSeconds ?? MCP_SUBSCRIPTION_TTL_SECONDS;
    this.#max = settings.maxPerPrincipal ?? MAX_MCP_SUBSCRIPTIONS;
    this.#now = settings.now ?? Date.now;
  }

  async subscribe(principalId: string, uri: string, hash?: string): Promise<McpSubscribeOutcome> {
    const { client, tableName } = this.#options;
    const key = mcpSubscriptionKey(principalId, uri);
    const { Item } = await guard("mcpSubscriptions.get", tableName, () =>
      client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true })),
    );
    // A renewal never counts against the bound; a new one does.
    if (!(Item && this.#live(Item)) && (await this.#count(principalId)) >= this.#max) {
      return { subscribed: false, limit: this.#max };
    }
    await guard("mcpSubscriptions.put", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...key,
            uri,
            ...(hash === undefined ? {} : { hash }),
            [TABLE.ttlAttribute]: Math.ceil(this.#now() / 1000) + this.#ttlSeconds,
          },
        }),
      ),
    );
    return { subscribed: true };
  }

  async unsubscribe(principalId: string, uri: string): Promise<void> {
    const { client, tableName } = this.#options;
    await guard("mcpSubscriptions.delete", tableName, () =>
      client.send(
        new DeleteCommand({ TableName: tableName, Key: mcpSubscriptionKey(principalId, uri) }),
      ),
    );
  }

  async list(principalId: string): Promise<McpSubscription[]> {
    const subscriptions: McpSubscription[] = [];
    for await (const item of this.#items(principalId, ["uri", "hash"])) {
      if (typeof item.uri !== "string") continue;
      subscriptions.push({
        uri: item.uri,
        ...(typeof item.hash === "string" ? { hash: item.hash } : {}),
      });
      // More than the bound only when subscriptions raced it: still bounded.
      if (subscriptions.length >= this.#max * 2) break;
    }
    return subscriptions;
  }

  async seen(principalId: string, uri: string, hash: string): Promise<void> {
    const { client, tableName } = this.#options;
    try {
      await guard("mcpSubscriptions.seen", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: mcpSubscriptionKey(principalId, uri),
            UpdateExpression: "SET #hash = :hash",
            // Only a subscription that still exists (and has not expired) is updated.
            ConditionExpression: "attribute_exists(pk) AND #ttl > :now",
            ExpressionAttributeNames: { "#hash": "hash", "#ttl": TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ":hash": hash,
              ":now": Math.floor(this.#now() / 1000),
            },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** The caller's live subscriptions, counted up to the bound. */
  async #count(principalId: string): Promise<number> {
    let count = 0;
    for await (const _ of this.#items(principalId, [])) {
      if (++count >= this.#max) break;
    }
    return count;
  }

  /** The caller's live items, page by page (expired ones skipped). */
  async *#items(principalId: string, attributes: string[]): AsyncGenerator<Item> {
    // Every name through a placeholder: DynamoDB reserves hundreds of words.
    const names = Object.fromEntries(
      [TABLE.sortKey, TABLE.ttlAttribute, ...attributes].map((name, index) => [`#a${index}`, name]),
    );
    const { client, tableName } = this.#options;
    let start: Record<string, NativeAttributeValue> | undefined;
    do {
      const page = await guard("mcpSubscriptions.query", tableName, () =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": mcpSubscriptionPartition(principalId) },
            ProjectionExpression: Object.keys(names).join(", "),
            ExpressionAttributeNames: names,
            ConsistentRead: true,
            Limit: PAGE,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of page.Items ?? []) if (this.#live(item)) yield item;
      start = page.LastEvaluatedKey;
    } while (start);
  }

  #live(item: Item): boolean {
    const expiresAt = item[TABLE.ttlAttribute];
    return typeof expiresAt === "number" && expiresAt * 1000 > this.#now();
  }
}
