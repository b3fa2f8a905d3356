import type { DynamoDBDocumentClient, NativeAttributeValue } from "@aws-sdk/lib-dynamodb";
import { BatchWriteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { UnavailableError } from "../../errors";
import { GroupCommit, type ItemOutcome } from "../../util/group-commit";
import { perTable } from "./per-table";

type Item = Record<string, NativeAttributeValue>;

/** BatchWriteItem takes at most 25 items; what it leaves unprocessed is sent again. */
const BATCH = 25;
const MAX_ATTEMPTS = 4;

/**
 * The one line of unconditional puts per table and client: items whose key alone makes the
 * write idempotent (event log entries, publication marks). Puts submitted together, from any
 * store of this process, leave in one BatchWriteItem; on a busy machine a request costs DynamoDB
 * Local far more than an item does. A lone put is a PutItem: a Lambda function handles one
 * event at a time and never has two to send, so on AWS it needs PutItem only — never
 * BatchWriteItem, which IAM cannot keep from deleting. Where one process runs every handler
 * (`npm start`), a put lingers a moment (`batchLingerMs`) so a call's publication mark and its
 * two log entries, written from three places, leave together.
 */
export const batchPut = perTable(
  ({ client, tableName, batchLingerMs }): GroupCommit<Item, void> =>
    new GroupCommit((items) => write(client, tableName, items), {
      maxItems: BATCH,
      ...(batchLingerMs ? { lingerMs: batchLingerMs } : {}),
    }),
);

const keyOf = (item: Item) => `${item.pk}\n${item.sk}`;

/** One BatchWriteItem, plus retries of what DynamoDB left unprocessed, for a batch. */
async function write(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: Item[],
): Promise<ItemOutcome<void>[]> {
  // One request may not name a key twice: a redelivered event arriving with its first copy.
  let pending = [...new Map(items.map((item) => [keyOf(item), item])).values()];
  const [lone] = pending;
  if (pending.length === 1 && lone) {
    await client.send(new PutCommand({ TableName: tableName, Item: lone }));
    return items.map(() => ({ ok: true, value: undefined }));
  }
  for (let attempt = 1; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await client.send(
      new BatchWriteCommand({
        RequestItems: { [tableName]: pending.map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
    const left = (UnprocessedItems?.[tableName] ?? []).flatMap((request) =>
      request.PutRequest?.Item ? [request.PutRequest.Item] : [],
    );
    if (left.length === 0) break;
    if (attempt >= MAX_ATTEMPTS) {
      const failed = new Set(left.map(keyOf));
      const error = new UnavailableError("The data store is unavailable; retry later.");
      return items.map((item) =>
        failed.has(keyOf(item)) ? { ok: false, error } : { ok: true, value: undefined },
      );
    }
    pending = left;
    await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
  }
  return items.map(() => ({ ok: true, value: undefined }));
}
