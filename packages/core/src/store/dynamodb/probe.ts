import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { DependencyProbe } from "../../app/health/service";
import type { DynamoStoreOptions } from "./client";

/**
 * DynamoDB answers when a GetItem of a key nothing is stored under comes back: the cheapest
 * read there is, and one the API's role may already make.
 */
export function dynamoProbe({ client, tableName }: DynamoStoreOptions): DependencyProbe {
  return {
    name: "dynamodb",
    async check(abortSignal) {
      await client.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: "HEALTH", sk: "HEALTH" },
          ProjectionExpression: "pk",
        }),
        { abortSignal },
      );
    },
  };
}
