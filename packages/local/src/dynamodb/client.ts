import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";

/**
 * DynamoDB Local runs with -sharedDb, so region and credentials only need to be well formed;
 * fixing them here keeps every caller off the developer's real AWS profile.
 */
export function localDynamoDbClient(
  endpoint: string,
  overrides: DynamoDBClientConfig = {},
): DynamoDBClient {
  return new DynamoDBClient({
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    endpoint,
    ...overrides,
  });
}
