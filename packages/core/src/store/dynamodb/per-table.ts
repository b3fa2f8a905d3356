import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { DynamoStoreOptions } from "./client";

/**
 * One `T` per document client and table, made on first use: what every store of a process on
 * that table shares (a batch line, a memory of calls), however many stores are built.
 */
export function perTable<T>(create: (options: DynamoStoreOptions) => T) {
  const made = new WeakMap<DynamoDBDocumentClient, Map<string, T>>();
  return (options: DynamoStoreOptions): T => {
    let byTable = made.get(options.client);
    if (!byTable) {
      byTable = new Map();
      made.set(options.client, byTable);
    }
    let value = byTable.get(options.tableName);
    if (value === undefined) {
      value = create(options);
      byTable.set(options.tableName, value);
    }
    return value;
  };
}
