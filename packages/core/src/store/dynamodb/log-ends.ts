import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { UnavailableError } from "../../errors";
import type { DynamoStoreOptions } from "./client";
import { LOG_PREFIX, runPartition } from "./items";
import { entryRange, LOG_LAST_ATTRIBUTE } from "./log-requests";
import { perTable } from "./per-table";

/** Tries at a run's end before an append gives up: each lost place means another writer's. */
export const APPEND_ATTEMPTS = 8;

/** The pause before trying a run's end again: at random, doubling with each attempt. */
export const pauseBeforeAttempt = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** attempt));

/** What an append that kept losing its place reports: the log is busy, retry later. */
export const appendGaveUp = (attempts: number, cause?: unknown, reasons?: string[]) =>
  new UnavailableError("The run's log could not be appended to; retry later.", {
    ...(cause !== undefined && { cause }),
    context: { attempts, ...(reasons && { reasons }) },
  });

/** Runs whose last place a process keeps in mind. */
const REMEMBERED_RUNS = 10_000;

/** The last place of each run this process wrote or read, per table: no Query per append. */
const runHeads = perTable(() => new Map<string, number>());

export function rememberHead(options: DynamoStoreOptions, runId: string, seq: number): void {
  const heads = runHeads(options);
  heads.delete(runId);
  heads.set(runId, seq);
  if (heads.size > REMEMBERED_RUNS) {
    const oldest = heads.keys().next();
    if (!oldest.done) heads.delete(oldest.value);
  }
}

/** Forgets where a run ends: another writer took a place this process thought free. */
export function forgetHead(options: DynamoStoreOptions, runId: string): void {
  runHeads(options).delete(runId);
}

/** The run's last place: remembered, or read (strongly) from its last entry's range. */
export async function headOf(options: DynamoStoreOptions, runId: string): Promise<number> {
  const known = runHeads(options).get(runId);
  if (known !== undefined) return known;
  const { Items } = await options.client.send(
    new QueryCommand({
      TableName: options.tableName,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": runPartition(runId), ":prefix": LOG_PREFIX },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
      ProjectionExpression: "sk, #last",
      ExpressionAttributeNames: { "#last": LOG_LAST_ATTRIBUTE },
    }),
  );
  const last = Items?.[0];
  return last ? entryRange(last).last : 0;
}
