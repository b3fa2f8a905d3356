import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { RateDecision, RateLimiter } from "../../ports";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard, isConditionFailure } from "./client";

/**
 * Fixed-window counters, one item per scope and window (RATE#<scope>#<window start> / COUNT),
 * incremented atomically with a condition, so concurrent handlers can never exceed the limit
 * together. Windows expire through TTL.
 */
export class DynamoRateLimiter implements RateLimiter {
  constructor(private readonly options: DynamoStoreOptions) {}

  async consume(
    scope: string,
    limit: { limit: number; windowSeconds: number },
    now: number,
  ): Promise<RateDecision> {
    const { client, tableName } = this.options;
    const windowMs = limit.windowSeconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const end = start + windowMs;
    try {
      await guard("rate.consume", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { [TABLE.partitionKey]: `RATE#${scope}#${start}`, [TABLE.sortKey]: "COUNT" },
            UpdateExpression: "ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)",
            ConditionExpression: "attribute_not_exists(#count) OR #count < :limit",
            ExpressionAttributeNames: { "#count": "count", "#ttl": TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ":one": 1,
              ":limit": limit.limit,
              ":ttl": Math.ceil(end / 1000) + 60,
            },
          }),
        ),
      );
      return { allowed: true };
    } catch (error) {
      if (isConditionFailure(error))
        return { allowed: false, retryAfterMs: Math.max(1, end - now) };
      throw error;
    }
  }
}
