import { EventEmitter } from "node:events";
import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type {
  ApiKeyRecord,
  CacheEntry,
  CapabilityStore,
  CatalogStore,
  KeyStore,
  ResultCache,
} from "../ports";
import { settleOn } from "../util/settle-on";
import { TtlCache } from "../util/ttl-cache";

/**
 * How stale an in-memory copy of the catalog or of a key may be, in ms. Every call reads its
 * tool and its caller's key; within one process a change through these stores is seen at once,
 * and a change made elsewhere (another Lambda instance, the deploy-time seed) within this bound.
 * A revoked key therefore stops working everywhere within 5 s.
 */
export const STORE_CACHE_TTL_MS = 5_000;

/**
 * The catalog with reads kept in memory for a few seconds; any write here forgets them all.
 * A whole-catalog list that comes back with a new version (a change made elsewhere) also
 * forgets the single tools read before it, so what a search just found, a call finds too.
 */
export function cachedCatalog(inner: CatalogStore, ttlMs = STORE_CACHE_TTL_MS): CatalogStore {
  const reads = new TtlCache<string, unknown>(ttlMs);
  const read = <T>(key: string, load: () => Promise<T>) => reads.get(key, load) as Promise<T>;
  let seenVersion: string | undefined;
  const listAll = async () => {
    const listed = await inner.list();
    // The first list too: what was read before it may be older than it.
    if (listed.version !== seenVersion) {
      for (const key of [...reads.keys()]) if (key.startsWith("tool")) reads.delete(key);
    }
    seenVersion = listed.version;
    return listed;
  };
  const write =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await operation(...args);
      } finally {
        // Also after a failure: a conflict means the stored catalog moved on.
        reads.clear();
      }
    };
  return {
    getTool: (id) => read(`tool#${id}`, () => inner.getTool(id)),
    getToolset: (name) => read(`toolset#${name}`, () => inner.getToolset(name)),
    list: (filter) =>
      filter?.toolset === undefined && filter?.category === undefined
        ? read("list##", listAll)
        : read(`list#${filter.toolset ?? ""}#${filter.category ?? ""}`, () => inner.list(filter)),
    putToolset: write((spec, revision) => inner.putToolset(spec, revision)),
    putTool: write((spec, revision) => inner.putTool(spec, revision)),
    replaceToolset: write((toolset, tools, options) =>
      inner.replaceToolset(toolset, tools, options),
    ),
    // Read by administrators only, rarely: never cached, so a review is always as stored.
    getReview: (name) => inner.getReview(name),
    setReview: write((name, review, revision) => inner.setReview(name, review, revision)),
    removeToolset: write((name, revision) => inner.removeToolset(name, revision)),
    setEnabled: write((id, enabled, revision) => inner.setEnabled(id, enabled, revision)),
    setAvailability: write((id, availability, revision) =>
      inner.setAvailability(id, availability, revision),
    ),
  };
}

/**
 * Capability statuses kept in memory for a few seconds, as the catalog is: every selection
 * (the catalog and prompt routes, search, MCP `tools/list`) reads them all, and they change
 * only when capabilities are refreshed. A status stored through this store is seen at once:
 * it is laid over what the store lists for as long as a listing may be older than it (a
 * list reads an index, which DynamoDB updates a moment after the write). One stored
 * elsewhere is seen within the same bound as a catalog change.
 */
export function cachedCapabilities(
  inner: CapabilityStore,
  ttlMs = STORE_CACHE_TTL_MS,
  clock: () => number = Date.now,
): CapabilityStore {
  const reads = new TtlCache<string, unknown>(ttlMs, 1_000, clock);
  const written = new Map<string, { status: CapabilityStatus; until: number }>();
  const fresh = () => {
    const now = clock();
    for (const [name, entry] of written) if (entry.until <= now) written.delete(name);
    return written;
  };
  return {
    async list() {
      const listed = (await reads.get("list", () => inner.list())) as CapabilityStatus[];
      const overlay = fresh();
      if (overlay.size === 0) return listed;
      const byName = new Map(listed.map((status) => [status.name, status]));
      for (const [name, entry] of overlay) byName.set(name, entry.status);
      return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async get(name) {
      const mine = fresh().get(name);
      if (mine) return mine.status;
      return (await reads.get(`get#${name}`, () => inner.get(name))) as
        | CapabilityStatus
        | undefined;
    },
    async put(status) {
      try {
        const stored = await inner.put(status);
        written.set(stored.name, { status: stored, until: clock() + ttlMs });
        return stored;
      } finally {
        reads.clear();
      }
    },
  };
}

/**
 * Keys verified in the last few seconds, by the key's SHA-256 (the plaintext is not kept).
 * Only valid keys are remembered, so a key created anywhere works at once; a revocation here
 * forgets them all.
 */
export function cachedKeys(
  inner: KeyStore,
  digest: (key: string) => string,
  ttlMs = STORE_CACHE_TTL_MS,
): KeyStore {
  const valid = new TtlCache<string, ApiKeyRecord | undefined>(ttlMs);
  const revocations = new EventEmitter();
  revocations.setMaxListeners(0);
  return {
    async verify(key) {
      const hash = digest(key);
      const record = await valid.get(hash, () => inner.verify(key));
      // Unknown keys are not remembered: a key just created elsewhere must work at once, and
      // a caller inventing keys must not fill the cache.
      if (record === undefined) valid.delete(hash);
      return record;
    },
    create: (input) => inner.create(input),
    list: () => inner.list(),
    async revoke(keyId) {
      try {
        return await inner.revoke(keyId);
      } finally {
        valid.clear();
        // After the cache is cleared: a woken stream asking about its key must hear "revoked".
        revocations.emit(keyId);
      }
    },
    revoked: (keyId, signal) => settleOn(revocations, keyId, signal),
  };
}

/** How many bytes of cached results one process keeps in memory (by their JSON size). */
const RESULT_MEMO_BYTES = 8 * 1024 * 1024;

/**
 * Fresh cached results kept in this process as well, so a repeated call is answered without
 * a read. Only fresh entries are served from memory; past `freshUntil` the shared cache is
 * asked again (another process may have refreshed it). Least recently used entries go first
 * once `maxBytes` is reached.
 */
export function memoResultCache(inner: ResultCache, maxBytes = RESULT_MEMO_BYTES): ResultCache {
  const memo = new Map<string, { entry: CacheEntry; bytes: number }>();
  let total = 0;
  const forget = (key: string) => {
    const held = memo.get(key);
    if (!held) return;
    memo.delete(key);
    total -= held.bytes;
  };
  const remember = (key: string, entry: CacheEntry) => {
    forget(key);
    const bytes = key.length + JSON.stringify(entry.value).length;
    // What the shared cache would not store whole (an item holds 400 KB) is not kept here either.
    if (bytes > Math.min(maxBytes, 400 * 1024)) return;
    memo.set(key, { entry, bytes });
    total += bytes;
    for (const oldest of memo.keys()) {
      if (total <= maxBytes) break;
      forget(oldest);
    }
  };
  return {
    async get(key, now) {
      const held = memo.get(key);
      if (held && held.entry.freshUntil > now) {
        // Most recently used last, so eviction takes the least recently used.
        memo.delete(key);
        memo.set(key, held);
        return held.entry;
      }
      const entry = await inner.get(key, now);
      if (entry) remember(key, entry);
      else forget(key);
      return entry;
    },
    async put(key, value, freshUntil, expiresAt) {
      await inner.put(key, value, freshUntil, expiresAt);
      remember(key, { value, freshUntil, expiresAt });
    },
  };
}
