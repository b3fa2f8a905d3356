import {
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { ValidationError } from "../../errors";
import type { TaskEntry, TaskIndex, TaskPage } from "../../ports";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard } from "./client";

type Item = Record<string, NativeAttributeValue>;

/**
 * A caller's tasks: TASKS#<principal id> / <createdAt>#<runId>#<callId>. ISO 8601 times from
 * `toISOString` have one width, so the sort key orders by creation; run and call ids hold no
 * `#`, so the key splits back into its parts. Every item expires with its task (expiresAt).
 */
export const taskPartition = (principalId: string) => `TASKS#${principalId}`;
export const taskSortKey = (task: Omit<TaskEntry, "ttlMs">) =>
  `${task.createdAt}#${task.runId}#${task.callId}`;

/** A sort key this index writes: a page's position is one, and nothing else is accepted. */
const SORT_KEY =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[A-Za-z0-9._:-]{1,128}#[A-Za-z0-9._:-]{1,128}$/;

/** Items read per query while filling a page (expired items DynamoDB has not deleted skipped). */
const QUERY_PAGE = 100;

/**
 * The MCP tasks each caller made, in the stage's table (see TaskIndex): one item per task,
 * written only when a call is made as a task, so plain calls cost nothing here. An item past
 * its ttl that DynamoDB has not deleted yet counts for nothing.
 */
export class DynamoTaskIndex implements TaskIndex {
  readonly #options: DynamoStoreOptions;
  readonly #now: () => number;

  constructor(options: DynamoStoreOptions, settings: { now?: () => number } = {}) {
    this.#options = options;
    this.#now = settings.now ?? Date.now;
  }

  async add(principalId: string, entry: TaskEntry): Promise<void> {
    const { client, tableName } = this.#options;
    await guard("taskIndex.put", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: taskPartition(principalId),
            sk: taskSortKey(entry),
            runId: entry.runId,
            callId: entry.callId,
            createdAt: entry.createdAt,
            ttlMs: entry.ttlMs,
            [TABLE.ttlAttribute]: Math.ceil((Date.parse(entry.createdAt) + entry.ttlMs) / 1000),
          },
        }),
      ),
    );
  }

  async get(principalId: string, task: Omit<TaskEntry, "ttlMs">): Promise<TaskEntry | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("taskIndex.get", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: taskPartition(principalId), sk: taskSortKey(task) },
          ConsistentRead: true,
        }),
      ),
    );
    return Item && this.#live(Item) ? entryOf(Item) : undefined;
  }

  async list(principalId: string, page: { limit: number; after?: string }): Promise<TaskPage> {
    if (page.after !== undefined && !SORT_KEY.test(page.after)) {
      throw new ValidationError("The cursor is not one this server handed out.");
    }
    const limit = Math.max(1, Math.floor(page.limit));
    const pk = taskPartition(principalId);
    const { client, tableName } = this.#options;
    // One more than asked, to know whether another page follows.
    const found: TaskEntry[] = [];
    let start: Item | undefined = page.after === undefined ? undefined : { pk, sk: page.after };
    do {
      const result = await guard("taskIndex.query", tableName, () =>
        client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": pk },
            ScanIndexForward: false,
            ConsistentRead: true,
            Limit: QUERY_PAGE,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      for (const item of result.Items ?? []) {
        if (this.#live(item)) found.push(entryOf(item));
        if (found.length > limit) break;
      }
      start = result.LastEvaluatedKey;
    } while (start && found.length <= limit);
    const tasks = found.slice(0, limit);
    const last = tasks.at(-1);
    return found.length > limit && last ? { tasks, next: taskSortKey(last) } : { tasks };
  }

  #live(item: Item): boolean {
    const expiresAt = item[TABLE.ttlAttribute];
    return typeof expiresAt === "number" && expiresAt * 1000 > this.#now();
  }
}

function entryOf(item: Item): TaskEntry {
  return {
    runId: String(item.runId),
    callId: String(item.callId),
    createdAt: String(item.createdAt),
    ttlMs: Number(item.ttlMs),
  };
}
