import { randomUUID } from "node:crypto";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { type AuditEntry, auditEntry } from "@toolbus/wire/model/audit";
import { ValidationError } from "../../errors";
import type { AuditLog } from "../../ports";
import { type DynamoStoreOptions, guard, parseStored } from "./client";
import { encodeCursor } from "./event-log";

const PARTITION = "AUDIT";
/** `<ISO time>#<uuid>`: newest last in the partition, read newest first. */
const SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f-]{36}$/;

/**
 * Who changed what, one item per admin write under AUDIT / <time>#<id>. Admin writes are rare
 * (catalog edits, keys, registrations), so one partition holds them and pages newest first.
 */
export class DynamoAuditLog implements AuditLog {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async record(entry: Omit<AuditEntry, "id">): Promise<AuditEntry> {
    const { client, tableName } = this.#options;
    const stored = { ...entry, id: randomUUID() };
    await guard("audit.record", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: PARTITION, sk: `${stored.at}#${stored.id}`, ...stored },
        }),
      ),
    );
    return stored;
  }

  async list(options: { limit: number; cursor?: string }) {
    const { client, tableName } = this.#options;
    const after = options.cursor === undefined ? undefined : decodeAuditCursor(options.cursor);
    const page = await guard("audit.list", tableName, () =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": PARTITION },
          ScanIndexForward: false,
          Limit: options.limit,
          ...(after ? { ExclusiveStartKey: { pk: PARTITION, sk: after } } : {}),
        }),
      ),
    );
    const items = page.Items ?? [];
    const last = items.at(-1);
    return {
      entries: items.map((item) => parseStored(auditEntry, item, "audit entry")),
      cursor: page.LastEvaluatedKey && last ? encodeCursor(String(last.sk)) : null,
    };
  }
}

function decodeAuditCursor(cursor: string): string {
  const sortKey = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8")
    : "";
  if (!SORT_KEY.test(sortKey) || encodeCursor(sortKey) !== cursor) {
    throw new ValidationError("The cursor is not valid; use one returned by a previous page.", {
      details: { cursor: cursor.slice(0, 100) },
    });
  }
  return sortKey;
}
