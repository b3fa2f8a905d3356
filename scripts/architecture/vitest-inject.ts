/**
 * Stands in for vitest when call-trace.ts runs a checkout's test helpers outside vitest: the
 * one thing they take from it is `inject("dynamodbEndpoint")`, the DynamoDB Local to use.
 */
export function inject(key: string): string {
  const endpoint = process.env.TOOLBUS_TRACE_DYNAMODB_ENDPOINT;
  if (key !== "dynamodbEndpoint" || !endpoint) {
    throw new Error(`The call trace provides only dynamodbEndpoint, not ${key}.`);
  }
  return endpoint;
}
