import { type DynamoDbLocal, startDynamoDbLocal } from "@toolbus/local/dynamodb";
import type { TestProject } from "vitest/node";
import "./context";

// One JVM for the whole run: starting DynamoDB Local costs seconds, tables cost milliseconds,
// so test files share the server and isolate themselves with uniquely named tables.
let dynamoDb: DynamoDbLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  dynamoDb = await startDynamoDbLocal();
  project.provide("dynamodbEndpoint", dynamoDb.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamoDb?.stop();
  dynamoDb = undefined;
}
