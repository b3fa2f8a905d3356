/** What a flush reports for one item: each item of a batch succeeds or fails on its own. */
export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Waiting<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions<T> {
  /** Most items one flush takes (the service's batch limit). */
  maxItems: number;
  /** Most bytes one flush takes, by `sizeOf`; an item larger than this still goes, alone. */
  maxBytes?: number;
  sizeOf?: (item: T) => number;
  /** Flushes in flight at once; items beyond wait and go together in the next. */
  maxInFlight?: number;
}

/**
 * Group commit: an item submitted while the line is free goes at once, alone; items submitted
 * while `maxInFlight` flushes are under way wait and go together in one request. A lone caller
 * pays nothing, and under load many small writes become a few batched ones — which is where
 * the time of a call goes on a busy machine (each request costs its client and its server far
 * more than each item does).
 */
export class GroupCommit<T, R> {
  readonly #waiting: Waiting<T, R>[] = [];
  #inFlight = 0;
  #scheduled = false;
  readonly #maxInFlight: number;

  constructor(
    private readonly flush: (items: T[]) => Promise<ItemOutcome<R>[]>,
    private readonly options: GroupCommitOptions<T>,
  ) {
    this.#maxInFlight = options.maxInFlight ?? 2;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      // Items submitted in the same turn (one publish of several events) go together.
      if (!this.#scheduled) {
        this.#scheduled = true;
        const go = () => {
          this.#scheduled = false;
          this.#next();
        };
        queueMicrotask(go);
      }
    });
  }

  #next(): void {
    while (this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        this.#next();
      });
    }
  }

  /** The next batch, in submission order, within the item and byte limits. */
  #take(): Waiting<T, R>[] {
    const { maxItems, maxBytes = Number.POSITIVE_INFINITY, sizeOf } = this.options;
    let bytes = 0;
    let count = 0;
    for (const waiting of this.#waiting) {
      const size = sizeOf ? sizeOf(waiting.item) : 0;
      if (count >= maxItems || (count > 0 && bytes + size > maxBytes)) break;
      bytes += size;
      count++;
    }
    return this.#waiting.splice(0, count);
  }

  async #run(batch: Waiting<T, R>[]): Promise<void> {
    let outcomes: ItemOutcome<R>[];
    try {
      outcomes = await this.flush(batch.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome ? outcome.error : new Error("The flush reported no outcome."));
    });
  }
}

/**
 * A group commit per key: items of one key go together (one line each, one flush in flight at
 * a time), items of different keys never do. A key's line is dropped as soon as nothing of it
 * is waiting or in flight, so the lines held are those of keys in use right now.
 */
export class KeyedGroupCommit<T, R> {
  readonly #lines = new Map<string, { line: GroupCommit<T, R>; pending: number }>();

  constructor(
    private readonly flush: (key: string, items: T[]) => Promise<ItemOutcome<R>[]>,
    private readonly options: Omit<GroupCommitOptions<T>, "maxInFlight">,
  ) {}

  async submit(key: string, item: T): Promise<R> {
    let entry = this.#lines.get(key);
    if (!entry) {
      const line = new GroupCommit<T, R>((items) => this.flush(key, items), {
        ...this.options,
        maxInFlight: 1,
      });
      entry = { line, pending: 0 };
      this.#lines.set(key, entry);
    }
    entry.pending++;
    try {
      return await entry.line.submit(item);
    } finally {
      // Nothing of this key is waiting or in flight once its last item is answered.
      if (--entry.pending === 0) this.#lines.delete(key);
    }
  }

  /** Keys with items waiting or in flight. */
  get keys(): number {
    return this.#lines.size;
  }
}
