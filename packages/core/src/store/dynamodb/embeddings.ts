import { BatchGetCommand, BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { VectorStore } from "../../app/search/semantic";
import { UnavailableError } from "../../errors";
import { type DynamoStoreOptions, guard } from "./client";

/** BatchGetItem reads at most 100 keys, BatchWriteItem writes at most 25 items. */
const GET_BATCH = 100;
const WRITE_BATCH = 25;
/** Attempts at what a batch left unprocessed, before the store counts as unavailable. */
const MAX_ATTEMPTS = 4;
const SORT_KEY = "VECTOR";

type Item = Record<string, unknown>;

/** A tool text's vector: EMBED#<model>#<hash of the text> / VECTOR (store/table.ts). */
export const embeddingKey = (model: string, hash: string) => ({
  pk: `EMBED#${model}#${hash}`,
  sk: SORT_KEY,
});

/** A vector as stored: its Float32 values, little-endian, as one binary attribute. */
export function packVector(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i] ?? 0, true);
  return bytes;
}

/** packVector reversed; undefined for bytes that cannot be one. */
export function unpackVector(bytes: unknown): Float32Array | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) {
    return undefined;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector.every(Number.isFinite) ? vector : undefined;
}

/**
 * Tool vectors in the stage's table, by model and text hash: computed once per text, read by
 * every process of the stage after. Vectors never change for a key, so they have no TTL; a
 * model no longer configured leaves its items behind (a few KB per tool).
 */
export class DynamoVectorStore implements VectorStore {
  constructor(private readonly options: DynamoStoreOptions) {}

  async get(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>> {
    const { client, tableName } = this.options;
    const found = new Map<string, Float32Array>();
    const prefix = `EMBED#${model}#`;
    const unique = [...new Set(hashes)];
    for (let at = 0; at < unique.length; at += GET_BATCH) {
      let keys: Item[] = unique.slice(at, at + GET_BATCH).map((hash) => embeddingKey(model, hash));
      for (let attempt = 1; keys.length > 0; attempt++) {
        const answer = await guard("BatchGetItem", tableName, () =>
          client.send(
            new BatchGetCommand({
              RequestItems: {
                [tableName]: {
                  Keys: keys,
                  ProjectionExpression: "#pk, #vector",
                  ExpressionAttributeNames: { "#pk": "pk", "#vector": "vector" },
                },
              },
            }),
          ),
        );
        for (const item of answer.Responses?.[tableName] ?? []) {
          const vector = unpackVector(item.vector);
          const pk = String(item.pk);
          if (vector && pk.startsWith(prefix)) found.set(pk.slice(prefix.length), vector);
        }
        keys = answer.UnprocessedKeys?.[tableName]?.Keys ?? [];
        if (keys.length > 0) await backOff(attempt);
      }
    }
    return found;
  }

  async put(model: string, vectors: ReadonlyMap<string, Float32Array>): Promise<void> {
    const { client, tableName } = this.options;
    const items: Item[] = [...vectors].map(([hash, vector]) => ({
      ...embeddingKey(model, hash),
      vector: packVector(vector),
      dimensions: vector.length,
    }));
    for (let at = 0; at < items.length; at += WRITE_BATCH) {
      let pending = items.slice(at, at + WRITE_BATCH);
      for (let attempt = 1; pending.length > 0; attempt++) {
        const answer = await guard("BatchWriteItem", tableName, () =>
          client.send(
            new BatchWriteCommand({
              RequestItems: { [tableName]: pending.map((Item) => ({ PutRequest: { Item } })) },
            }),
          ),
        );
        pending = (answer.UnprocessedItems?.[tableName] ?? []).flatMap((request) =>
          request.PutRequest?.Item ? [request.PutRequest.Item] : [],
        );
        if (pending.length > 0) await backOff(attempt);
      }
    }
  }
}

/** Waits before another attempt at what a batch left unprocessed; gives up after MAX_ATTEMPTS. */
async function backOff(attempt: number): Promise<void> {
  if (attempt >= MAX_ATTEMPTS)
    throw new UnavailableError("The data store is unavailable; retry later.");
  await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * Math.random()));
}
