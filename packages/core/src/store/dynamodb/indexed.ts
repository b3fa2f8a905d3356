import { BatchGetCommand } from "@aws-sdk/lib-dynamodb";
import { UnavailableError } from "../../errors";
import { type DynamoStoreOptions, guard, queryAll } from "./client";

type Item = Record<string, unknown>;

/** BatchGetItem reads at most 100 keys a request. */
const GET_BATCH = 100;
/**
 * Rounds in a row in which a batch read returned none of the keys it was asked for, before the
 * store counts as unavailable. A round that returns some (an answer stops at 16 MB) does not
 * count: only throttling does.
 */
const MAX_EMPTY_ROUNDS = 5;
/** The index of work in flight. */
const INDEX = "gsi4";

/**
 * The items on one partition of gsi4 (the sparse index of work in flight, store/table.ts) whose
 * sort key is before `before`, oldest first, at most `limit`. gsi4 holds keys only, so this is
 * a Query for the keys, then a consistent BatchGetItem for the items (up to 100 keys a request,
 * what it leaves unprocessed retried with backoff).
 *
 * An index lags its table, and an item moves on between the two reads: one no longer on
 * `partition` before `before` when read (claimed, completed, logged, delivered, deleted) is
 * left out, as its conditional write would refuse it anyway; the rest are ordered by their sort
 * key as read. So fewer than `limit` may come back while more wait: the next sweep takes them.
 */
export async function queryIndexed(
  options: DynamoStoreOptions,
  operation: string,
  partition: string,
  before: string,
  limit: number,
): Promise<Item[]> {
  const { client, tableName } = options;
  return guard(operation, tableName, async () => {
    const entries = await indexKeys(options, partition, before, limit);
    // An item that moved within the partition between two pages is listed twice: read it once.
    const keys = new Map<string, Item>();
    for (const { pk, sk } of entries) keys.set(JSON.stringify([pk, sk]), { pk, sk });
    const order = [...keys.keys()];
    const found = new Map<string, Item>();
    const unique = [...keys.values()];
    for (let at = 0; at < unique.length; at += GET_BATCH) {
      let pending = unique.slice(at, at + GET_BATCH);
      for (let empty = 0; pending.length > 0; ) {
        const answer = await client.send(
          new BatchGetCommand({
            // The item as it is now: the sweeper acts on what it reads (with conditions that
            // check the status, not every field), so never an item older than its index entry.
            RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } },
          }),
        );
        const got = answer.Responses?.[tableName] ?? [];
        for (const item of got) found.set(JSON.stringify([item.pk, item.sk]), item);
        pending = answer.UnprocessedKeys?.[tableName]?.Keys ?? [];
        empty = got.length > 0 ? 0 : empty + 1;
        if (pending.length > 0) await backOff(empty, { operation, tableName });
      }
    }
    const items: Item[] = [];
    for (const key of order) {
      const item = found.get(key);
      if (item?.gsi2pk === partition && String(item.gsi2sk) < before) items.push(item);
    }
    // Stable: the index's order where the sort keys tie.
    return items.sort((a, b) => compare(String(a.gsi2sk), String(b.gsi2sk)));
  });
}

/** The index entries: keys only, oldest first. */
async function indexKeys(
  options: DynamoStoreOptions,
  partition: string,
  before: string,
  limit: number,
): Promise<Item[]> {
  return queryAll(
    options.client,
    {
      TableName: options.tableName,
      IndexName: INDEX,
      KeyConditionExpression: "gsi2pk = :index AND gsi2sk < :before",
      ExpressionAttributeValues: { ":index": partition, ":before": before },
      ProjectionExpression: "pk, sk",
    },
    limit,
  );
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Waits before another round at what a batch read left; gives up after MAX_EMPTY_ROUNDS. */
async function backOff(empty: number, context: Record<string, unknown>): Promise<void> {
  if (empty >= MAX_EMPTY_ROUNDS) {
    throw new UnavailableError("The data store is unavailable; retry later.", { context });
  }
  // Full jitter, from up to 50 ms doubling to up to 800 ms.
  await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** empty * Math.random()));
}
