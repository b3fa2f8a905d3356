import { builtinTools } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogStore, KeyStore, ResultCache } from "../packages/core/src/ports";
import {
  cachedCapabilities,
  cachedCatalog,
  cachedKeys,
  memoResultCache,
} from "../packages/core/src/store/cached";
import {
  createDocumentClient,
  DynamoCapabilityStore,
  DynamoCatalogStore,
  DynamoKeyStore,
  DynamoResultCache,
} from "../packages/core/src/store/dynamodb";
import { hashKey } from "../packages/core/src/store/dynamodb/keys";
import { toolSpecOf } from "../packages/core/src/tool-definition";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let options: { client: typeof documents; tableName: string };

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-cached");
  options = { client: documents, tableName: table.tableName };
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

/** The real store, counting how often each method reached DynamoDB. */
function counted<T extends object>(store: T): { store: T; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        reads.set(String(name), (reads.get(String(name)) ?? 0) + 1);
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, reads };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the catalog read through memory", () => {
  const readability = builtinTools.find((t) => t.spec.id === "readability_analyzer");
  if (!readability) throw new Error("readability_analyzer is a built-in tool");
  const spec = toolSpecOf(readability);

  it("reads a tool from DynamoDB once while fresh, and sees a change made through it at once", async () => {
    const { store, reads } = counted<CatalogStore>(new DynamoCatalogStore(options));
    const catalog = cachedCatalog(store, 60_000);
    await catalog.putTool(spec);
    await Promise.all([catalog.getTool(spec.id), catalog.getTool(spec.id)]);
    await catalog.getTool(spec.id);
    expect(reads.get("getTool")).toBe(1);
    await catalog.setEnabled(spec.id, false);
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(false);
    expect(reads.get("getTool")).toBe(2);
  });

  it("sees a change made by another process once the staleness bound has passed", async () => {
    const shared = new DynamoCatalogStore(options);
    const catalog = cachedCatalog(shared, 100);
    await shared.putTool(spec);
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(true);
    await shared.setEnabled(spec.id, false);
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(true);
    await sleep(150);
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(false);
  });

  it("forgets the tools it read once a whole-catalog list shows a new version", async () => {
    const shared = new DynamoCatalogStore(options);
    const catalog = cachedCatalog(shared, 400);
    await shared.putTool(spec);
    await shared.setEnabled(spec.id, true);
    const first = await catalog.list();
    await sleep(200);
    // Read later than the list: still fresh when the list is read again below.
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(true);
    await shared.setEnabled(spec.id, false);
    await sleep(250);
    const second = await catalog.list();
    expect(second.version).not.toBe(first.version);
    expect((await catalog.getTool(spec.id))?.availability.enabled).toBe(false);
  });

  it("forgets a tool read before its first whole-catalog list, too", async () => {
    const shared = new DynamoCatalogStore(options);
    const catalog = cachedCatalog(shared, 60_000);
    const id = "cache_cold_probe";
    expect(await catalog.getTool(id)).toBeUndefined();
    await shared.putTool({ ...spec, id });
    expect((await catalog.list()).tools.map((tool) => tool.id)).toContain(id);
    expect((await catalog.getTool(id))?.id).toBe(id);
  });

  it("gives the same version for the same catalog, and a new one for any change", async () => {
    const store = new DynamoCatalogStore(options);
    const before = (await store.list()).version;
    expect((await store.list()).version).toBe(before);
    const current = await store.getTool(spec.id);
    await store.putTool(
      { ...spec, description: `${spec.description} Changed.` },
      current?.revision,
    );
    expect((await store.list()).version).not.toBe(before);
  });
});

describe("capability statuses read through memory", () => {
  it("lists them from DynamoDB once while fresh, and sees a status stored through it at once", async () => {
    const shared = new DynamoCapabilityStore(options);
    const { store, reads } = counted(shared);
    const capabilities = cachedCapabilities(store, 60_000);
    const status = (available: boolean) => ({
      name: "cache_probe",
      available,
      checkedAt: new Date().toISOString(),
    });
    await capabilities.put(status(true));
    await Promise.all([capabilities.list(), capabilities.list()]);
    expect(reads.get("list")).toBe(1);
    // Changed elsewhere: not seen while fresh.
    await shared.put(status(false));
    const stale = await capabilities.list();
    expect(stale.find((s) => s.name === "cache_probe")?.available).toBe(true);
    // Changed through it: seen at once.
    await capabilities.put(status(false));
    const fresh = await capabilities.list();
    expect(fresh.find((s) => s.name === "cache_probe")?.available).toBe(false);
    expect(reads.get("list")).toBe(2);
  });
});

describe("API keys verified through memory", () => {
  it("verifies a valid key from DynamoDB once while fresh", async () => {
    const { store, reads } = counted<KeyStore>(new DynamoKeyStore(options));
    const keys = cachedKeys(store, hashKey, 60_000);
    const { key } = await keys.create({ name: "memo", role: "member" });
    for (let i = 0; i < 5; i++) expect((await keys.verify(key))?.role).toBe("member");
    expect(reads.get("verify")).toBe(1);
  });

  it("does not remember unknown keys, so a key created elsewhere works at once", async () => {
    const shared = new DynamoKeyStore(options);
    const keys = cachedKeys(shared, hashKey, 60_000);
    const fixed = "memo-fixed-key-0123456789abcdefghij";
    expect(await keys.verify(fixed)).toBeUndefined();
    await shared.create({ name: "elsewhere", role: "viewer", key: fixed });
    expect((await keys.verify(fixed))?.role).toBe("viewer");
  });

  it("stops a key revoked through it at once, and one revoked elsewhere within the bound", async () => {
    const shared = new DynamoKeyStore(options);
    const here = cachedKeys(shared, hashKey, 60_000);
    const first = await here.create({ name: "revoked-here", role: "member" });
    expect(await here.verify(first.key)).toBeDefined();
    await here.revoke(first.record.keyId);
    expect(await here.verify(first.key)).toBeUndefined();

    const bounded = cachedKeys(shared, hashKey, 100);
    const second = await shared.create({ name: "revoked-elsewhere", role: "member" });
    expect(await bounded.verify(second.key)).toBeDefined();
    await shared.revoke(second.record.keyId);
    await sleep(150);
    expect(await bounded.verify(second.key)).toBeUndefined();
  });
});

describe("cached results kept in memory", () => {
  const value = { output: "hello", data: { n: 1 }, citations: [] };

  it("answers a fresh entry from memory, and asks the shared cache again once it is not fresh", async () => {
    const { store, reads } = counted<ResultCache>(new DynamoResultCache(options));
    const cache = memoResultCache(store);
    const now = Date.now();
    await cache.put("memo#1#a", value, now + 1_000, now + 60_000);
    expect((await cache.get("memo#1#a", now))?.value).toEqual(value);
    expect(reads.get("get")).toBeUndefined();
    // Past freshUntil: stale-if-error is the shared cache's to decide, so it is read.
    expect((await cache.get("memo#1#a", now + 2_000))?.freshUntil).toBe(now + 1_000);
    expect(reads.get("get")).toBe(1);
  });

  it("keeps no more than its byte budget, dropping the least recently used first", async () => {
    const { store, reads } = counted<ResultCache>(new DynamoResultCache(options));
    // Room for two entries of this size, not three.
    const cache = memoResultCache(store, 400);
    const now = Date.now();
    const big = { output: "x".repeat(150), data: null, citations: [] };
    await cache.put("memo#2#a", big, now + 60_000, now + 120_000);
    await cache.put("memo#2#b", big, now + 60_000, now + 120_000);
    await cache.get("memo#2#a", now); // a is now the most recently used
    await cache.put("memo#2#c", big, now + 60_000, now + 120_000);
    expect((await cache.get("memo#2#a", now))?.value.output).toBe(big.output);
    expect((await cache.get("memo#2#c", now))?.value.output).toBe(big.output);
    expect(reads.get("get")).toBeUndefined();
    expect((await cache.get("memo#2#b", now))?.value.output).toBe(big.output);
    expect(reads.get("get")).toBe(1);
  });
});
