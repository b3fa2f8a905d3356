import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { z } from "zod";
import { ToolbusError, UnavailableError, ValidationError, zodIssues } from "../../errors";
import type { ItemOutcome } from "../../util/group-commit";
import type { LogRequest } from "./log-requests";

/** Appends a flush's log requests: one outcome per request, in order. */
export type LogAppend = (
  options: DynamoStoreOptions,
  requests: LogRequest[],
) => Promise<ItemOutcome<void>[]>;

/** What every DynamoDB adapter is built from. */
export interface DynamoStoreOptions {
  client: DynamoDBDocumentClient;
  tableName: string;
  /** Clock for timestamps the store sets itself (startedAt, revokedAt, updatedAt). */
  now?: () => Date;
  /**
   * How run logs are appended when not with transactions (log-writer.ts): where one process
   * writes the whole table (`npm start`), with plain batched puts (`appendAsSoleWriter`).
   * Passed in by that runtime, so no Lambda bundle carries it.
   */
  appendLog?: LogAppend;
  /** The stage stream's settings: the sole writer puts its chunks (log-sole-stream.ts). */
  stream?: { retentionDays: number };
}

const documentClients = new WeakMap<DynamoDBClient, DynamoDBDocumentClient>();

/**
 * The document client every adapter expects, one per DynamoDB client: every store of a process
 * shares it, and with it the line that batches their unconditional puts. `removeUndefinedValues`
 * because optional model fields arrive as `undefined` and DynamoDB rejects them instead of
 * dropping them.
 */
export function createDocumentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  let doc = documentClients.get(client);
  if (!doc) {
    doc = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    documentClients.set(client, doc);
  }
  return doc;
}

// Throttling and server-side faults: DynamoDB is there but cannot answer now.
const UNAVAILABLE_NAMES = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "InternalServerError",
  "InternalFailure",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
]);

// Node socket errors: the request never got an answer.
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/**
 * True when an SDK error means "DynamoDB could not be reached or could not serve us now", as
 * opposed to an answer about the request (condition failed, validation, missing table).
 */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof ToolbusError) return false;
  if (UNAVAILABLE_NAMES.has(error.name)) return true;
  const { code, $metadata } = error as { code?: unknown; $metadata?: { httpStatusCode?: number } };
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
  // The SDK's retry layer attaches $metadata to every error it saw; only a real reply carries
  // an HTTP status. Errors without $metadata at all were raised before sending (marshalling,
  // our own code) and are bugs, not outages.
  if ($metadata !== undefined) {
    const status = $metadata.httpStatusCode;
    return status === undefined || status >= 500;
  }
  return false;
}

/**
 * The one place SDK failures become UnavailableError (503 at the API) with the SDK error as
 * cause. Anything else is passed through so callers can still see condition failures.
 */
export function toStoreError(error: unknown, operation: string, tableName: string): unknown {
  if (!isUnavailable(error)) return error;
  return new UnavailableError("The data store is unavailable; retry later.", {
    cause: error,
    context: { operation, tableName },
  });
}

/** Runs one store operation, mapping outages with toStoreError. */
export async function guard<T>(
  operation: string,
  tableName: string,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toStoreError(error, operation, tableName);
  }
}

export function isConditionFailure(error: unknown): error is Error & { Item?: unknown } {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}

export function isValidationException(error: unknown): boolean {
  return error instanceof Error && error.name === "ValidationException";
}

/**
 * Follows LastEvaluatedKey until the query is exhausted or `limit` items were collected, so
 * callers never see DynamoDB's 1 MB page boundaries.
 */
export async function queryAll(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
  limit = Number.POSITIVE_INFINITY,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey = input.ExclusiveStartKey;
  do {
    const remaining = limit - items.length;
    const page = await client.send(
      new QueryCommand({
        ...input,
        ExclusiveStartKey: startKey,
        Limit: Number.isFinite(remaining) ? remaining : input.Limit,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined && items.length < limit);
  return items;
}

/** Key attributes and bookkeeping that are never part of a model object. */
const STORAGE_ATTRIBUTES = [
  "pk",
  "sk",
  "gsi1pk",
  "gsi1sk",
  "gsi2pk",
  "gsi2sk",
  "gsi3pk",
  "gsi3sk",
  "expiresAt",
];

export function withoutKeys(item: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...item };
  for (const name of STORAGE_ATTRIBUTES) delete rest[name];
  return rest;
}

/**
 * Parses a stored item back into its model. A stored item that no longer fits its schema is
 * our bug or a bad migration, so it surfaces as an internal error naming the item, not a 400.
 */
export function parseStored<T>(
  schema: z.ZodType<T>,
  item: Record<string, unknown>,
  what: string,
): T {
  const parsed = schema.safeParse(withoutKeys(item));
  if (parsed.success) return parsed.data;
  throw new ToolbusError(`A stored ${what} is not valid.`, {
    cause: parsed.error,
    // A key item's pk is the key's hash, which must never reach a log.
    context: { pk: String(item.pk).startsWith("KEY#") ? "KEY#…" : item.pk, sk: item.sk },
  });
}

/** Parses caller input with a model schema, turning zod issues into a ValidationError. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ValidationError(`The ${what} is not valid.`, {
    details: zodIssues(parsed.error.issues, "(value)"),
  });
}
