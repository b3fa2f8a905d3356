// What the global setup hands to test files through inject(), typed on both sides.
declare module "vitest" {
  export interface ProvidedContext {
    /** Endpoint of the DynamoDB Local shared by the whole run (in memory, -sharedDb). */
    dynamodbEndpoint: string;
  }
}

export {};
