import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import {
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type { ApiKeyRecord, KeyStore } from "../../ports";
import { type DynamoStoreOptions, guard, isConditionFailure, queryAll } from "./client";
import { apiKeyKey, KEYS_PARTITION, keyIndexSortKey } from "./items";

type Item = Record<string, NativeAttributeValue>;

/** `tbk_<keyId>_<secret>`: 16 hex characters of id, 32 random bytes of secret in base64url. */
const KEY_FORMAT = /^tbk_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
const KEY_ID_FORMAT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Longer strings cannot be a key we issued or registered; do not even hash them. */
const MAX_KEY_LENGTH = 1_024;

/**
 * API keys. Only sha256(key) is stored, as the item's pk (KEY#<hex>), so a leaked table does
 * not leak usable keys and verifying is one GetItem. gsi1 (KEYS / KEY#<keyId>) lists them and
 * finds one by id for revocation. Neither the hash nor a plaintext key ever leaves this class,
 * except the plaintext returned once by `create`.
 */
export class DynamoKeyStore implements KeyStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  /**
   * Issues a new key, or registers a fixed one (the admin bootstrap key from configuration).
   * Registering the same fixed key again with the same name and role returns its record, so
   * every start-up may do it; a revoked one stays revoked (ConflictError).
   */
  async create(input: {
    name: string;
    role: string;
    keyId?: string;
    key?: string;
    actsFor?: boolean;
  }): Promise<{
    key: string;
    record: ApiKeyRecord;
  }> {
    const { client, tableName } = this.#options;
    if (input.keyId !== undefined && !KEY_ID_FORMAT.test(input.keyId)) {
      throw new ValidationError("keyId must be 1-64 letters, digits, . _ or -.", {
        details: { keyId: input.keyId },
      });
    }
    if (input.key !== undefined && (input.key.length === 0 || input.key.length > MAX_KEY_LENGTH)) {
      throw new ValidationError(`A fixed key must have 1 to ${MAX_KEY_LENGTH} characters.`);
    }
    if (input.name.length === 0 || input.role.length === 0) {
      throw new ValidationError("A key needs a name and a role.");
    }

    const keyId = input.keyId ?? keyIdOf(input.key) ?? randomKeyId();
    const key = input.key ?? `tbk_${keyId}_${randomBytes(32).toString("base64url")}`;
    const hash = hashKey(key);
    const record: ApiKeyRecord = {
      keyId,
      name: input.name,
      role: input.role,
      createdAt: this.#now(),
      ...(input.actsFor ? { actsFor: true } : {}),
    };

    // Random ids do not collide; chosen or derived ones might, and revoke finds keys by id.
    if (input.keyId !== undefined || input.key !== undefined) {
      const holders = await this.#byKeyId(keyId, "keys.create");
      if (holders.some((item) => !samePk(item.pk, hash))) {
        throw new ConflictError(`Another key already has the id ${keyId}.`, {
          context: { keyId },
        });
      }
    }

    return guard("keys.create", tableName, async () => {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...apiKeyKey(hash),
              gsi1pk: KEYS_PARTITION,
              gsi1sk: keyIndexSortKey(keyId),
              ...record,
            },
            ConditionExpression: "attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return { key, record };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const existing = rawRecord(error.Item);
        if (
          existing?.name === input.name &&
          existing.role === input.role &&
          (existing.actsFor ?? false) === (input.actsFor ?? false) &&
          !existing.revokedAt
        ) {
          return { key, record: existing };
        }
        throw new ConflictError("This key is already registered with another name or role.", {
          context: { keyId: existing?.keyId },
        });
      }
    });
  }

  async verify(key: string): Promise<ApiKeyRecord | undefined> {
    const { client, tableName } = this.#options;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) return undefined;
    const hash = hashKey(key);
    const { Item } = await guard("keys.verify", tableName, () =>
      client.send(new GetCommand({ TableName: tableName, Key: apiKeyKey(hash) })),
    );
    // The lookup is by hash already; comparing again in constant time costs nothing and keeps
    // a future index or cache in front of this from turning into a timing oracle.
    if (Item === undefined || !samePk(Item.pk, hash) || Item.revokedAt !== undefined) {
      return undefined;
    }
    return toRecord(Item);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { client, tableName } = this.#options;
    const items = await guard("keys.list", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :keys",
        ExpressionAttributeValues: { ":keys": KEYS_PARTITION },
      }),
    );
    return items.map(toRecord);
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const { client, tableName } = this.#options;
    const holders = await this.#byKeyId(keyId, "keys.revoke");
    if (holders.length === 0) {
      throw new NotFoundError(`No API key ${keyId}.`, { context: { keyId } });
    }
    const revoked: ApiKeyRecord[] = [];
    for (const holder of holders) {
      const { Attributes } = await guard("keys.revoke", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: holder.pk, sk: holder.sk },
            // Revoking twice keeps the first time.
            UpdateExpression: "SET revokedAt = if_not_exists(revokedAt, :now)",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":now": this.#now() },
            ReturnValues: "ALL_NEW",
          }),
        ),
      );
      if (Attributes !== undefined) revoked.push(toRecord(Attributes));
    }
    const [first] = revoked;
    if (first === undefined)
      throw new NotFoundError(`No API key ${keyId}.`, { context: { keyId } });
    return first;
  }

  async #byKeyId(keyId: string, operation: string): Promise<Item[]> {
    const { client, tableName } = this.#options;
    return guard(operation, tableName, () =>
      queryAll(client, {
        TableName: tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :keys AND gsi1sk = :id",
        ExpressionAttributeValues: { ":keys": KEYS_PARTITION, ":id": keyIndexSortKey(keyId) },
      }),
    );
  }

  #now(): string {
    return (this.#options.now?.() ?? new Date()).toISOString();
  }
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/**
 * The id inside a key of our own format. Any other fixed key gets a random id rather than
 * one derived from its hash: ids show up in lists and logs, and a hash prefix there would let
 * anyone test guesses of a weak configured key offline. Re-registering finds it by hash.
 */
function keyIdOf(key: string | undefined): string | undefined {
  return key === undefined ? undefined : KEY_FORMAT.exec(key)?.[1];
}

function randomKeyId(): string {
  return randomBytes(8).toString("hex");
}

function samePk(pk: unknown, hash: string): boolean {
  const expected = Buffer.from(apiKeyKey(hash).pk, "utf8");
  const actual = Buffer.from(String(pk), "utf8");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Only the public fields: the item's pk is the key's hash. */
function toRecord(item: Item): ApiKeyRecord {
  return {
    keyId: String(item.keyId),
    name: String(item.name),
    role: String(item.role),
    createdAt: String(item.createdAt),
    ...(typeof item.revokedAt === "string" ? { revokedAt: item.revokedAt } : {}),
    ...(typeof item.lastUsedAt === "string" ? { lastUsedAt: item.lastUsedAt } : {}),
    ...(item.actsFor === true ? { actsFor: true } : {}),
  };
}

/** The record inside a condition failure's item, which the SDK leaves in wire format. */
function rawRecord(item: unknown): ApiKeyRecord | undefined {
  if (item === undefined || item === null) return undefined;
  return toRecord(unmarshall(item as Parameters<typeof unmarshall>[0]));
}
