import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { citation } from "@toolbus/wire/model/call";
import { contentBlock } from "@toolbus/wire/model/content";
import * as z from "zod";
import type { CachedOutput, CacheEntry, ResultCache } from "../../ports";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard } from "./client";
import { decodeJsonFields, encodeJsonFields } from "./json-text";
import { fitResult } from "./result-size";

/** A stored entry's value, checked on the way out: the table is not trusted blindly. */
export const cachedOutput: z.ZodType<CachedOutput> = z.object({
  output: z.string(),
  data: z.unknown(),
  citations: z.array(citation),
  content: z.array(contentBlock).optional(),
});

/**
 * Cached external results: CACHE#<key> / RESULT with a TTL. DynamoDB deletes expired items
 * only eventually, so reads check the times themselves.
 */
export class DynamoResultCache implements ResultCache {
  constructor(private readonly options: DynamoStoreOptions) {}

  async get(key: string, now: number): Promise<CacheEntry | undefined> {
    const { client, tableName } = this.options;
    const { Item } = await guard("cache.get", tableName, () =>
      client.send(new GetCommand({ TableName: tableName, Key: cacheKey(key) })),
    );
    if (!Item || typeof Item.freshUntil !== "number" || typeof Item.expiresAt !== "number") {
      return undefined;
    }
    if (Item.expiresAt * 1000 <= now) return undefined;
    const value = cachedOutput.safeParse(decodeJsonFields(Item, ["value"]).value);
    if (!value.success) return undefined;
    return { value: value.data, freshUntil: Item.freshUntil, expiresAt: Item.expiresAt * 1000 };
  }

  async put(
    key: string,
    value: CachedOutput,
    freshUntil: number,
    expiresAt: number,
  ): Promise<void> {
    const { client, tableName } = this.options;
    // A result too large to store whole is not worth caching: the next call fetches it again.
    const probe = fitResult({
      status: "succeeded",
      ...value,
      cached: false,
      stale: false,
      durationMs: 0,
      resultBytes: 0,
      truncated: false,
      completedAt: "",
    });
    if (probe.truncated) return;
    await guard("cache.put", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...cacheKey(key),
            // A tool's output, numbers and nesting as the upstream sent them: JSON text.
            ...encodeJsonFields({ value }, ["value"]),
            freshUntil,
            [TABLE.ttlAttribute]: Math.ceil(expiresAt / 1000),
          },
        }),
      ),
    );
  }
}

const cacheKey = (key: string) => ({
  [TABLE.partitionKey]: `CACHE#${key}`,
  [TABLE.sortKey]: "RESULT",
});
