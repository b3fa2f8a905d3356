import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type DynamoStoreOptions, guard } from "./client";

/** Every subscription's partition, and its items' sort-key prefix (SUBSCRIPTIONS / SUB#<id>). */
export const SUBSCRIPTIONS_PARTITION = "SUBSCRIPTIONS";
export const SUBSCRIPTION_SORT_PREFIX = "SUB#";

/**
 * Whether any subscription is stored: one key read with a consistent query, not the
 * partition. Apart from the subscription store, so the sweeper, which asks every minute,
 * carries neither the store nor the subscriptions' schemas.
 */
export async function anySubscription(options: DynamoStoreOptions): Promise<boolean> {
  const { client, tableName } = options;
  const { Items } = await guard("subscriptions.any", tableName, () =>
    client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: "pk = :partition AND begins_with(sk, :sub)",
        ExpressionAttributeValues: {
          ":partition": SUBSCRIPTIONS_PARTITION,
          ":sub": SUBSCRIPTION_SORT_PREFIX,
        },
        ProjectionExpression: "sk",
        Limit: 1,
        ConsistentRead: true,
      }),
    ),
  );
  return (Items?.length ?? 0) > 0;
}
