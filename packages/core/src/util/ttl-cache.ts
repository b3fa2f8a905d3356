/**
 * A bounded in-memory cache whose entries expire `ttlMs` after they were loaded. Concurrent
 * misses for one key share a single load, and a failed load is not kept.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: Promise<V>; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1_000,
    private readonly clock: () => number = Date.now,
  ) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    const now = this.clock();
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > now) return entry.value;
    if (entry) this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      // Oldest first (insertion order): enough to bound memory against a caller inventing keys.
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    const value = load();
    const loaded = { value, expiresAt: now + this.ttlMs };
    this.#entries.set(key, loaded);
    value.catch(() => {
      if (this.#entries.get(key) === loaded) this.#entries.delete(key);
    });
    return value;
  }

  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Forgets everything: the next read of any key loads it afresh. */
  clear(): void {
    this.#entries.clear();
  }
}
