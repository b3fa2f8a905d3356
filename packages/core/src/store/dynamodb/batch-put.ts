import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { UnavailableError } from "../../errors";
import type { DynamoStoreOptions } from "./client";

type Item = Record<string, unknown>;

/** BatchWriteItem takes at most 25 items; what it leaves unprocessed is sent again. */
export const BATCH_ITEMS = 25;
const MAX_ATTEMPTS = 4;

/**
 * Plain puts, BATCH_ITEMS to a BatchWriteItem, one after another and in the order given: an
 * item lands only once every request before its own has.
 */
export async function putItems(options: DynamoStoreOptions, items: Item[]): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH_ITEMS) {
    await putBatch(options, items.slice(start, start + BATCH_ITEMS));
  }
}

/** One BatchWriteItem, plus retries of what it left unprocessed. */
async function putBatch(options: DynamoStoreOptions, items: Item[]): Promise<void> {
  const { client, tableName } = options;
  let pending = items;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await client.send(
      new BatchWriteCommand({
        RequestItems: { [tableName]: pending.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    pending = (UnprocessedItems?.[tableName] ?? []).flatMap((request) =>
      request.PutRequest?.Item ? [request.PutRequest.Item] : [],
    );
    if (pending.length === 0) return;
    if (attempt >= MAX_ATTEMPTS) {
      throw new UnavailableError("The data store is unavailable; retry later.");
    }
    await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
  }
}
