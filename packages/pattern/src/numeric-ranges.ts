/**
 * Numeric ranges of the index, answering "which ranges hold x" in O(log n + found) with an
 * interval tree laid over an array sorted by lower bound: each subtree keeps its largest upper
 * bound, so subtrees ending below x and right halves starting above x are skipped. Changes
 * only mark it stale; the next query rebuilds it (O(n log n)), so a burst of PutRule calls
 * costs one rebuild.
 */

export interface NumericRange {
  low: number;
  lowOpen: boolean;
  high: number;
  highOpen: boolean;
}

interface Stored<T> extends NumericRange {
  item: T;
}

export interface NumericRanges<T> {
  /** Stores `item` under `range`; the returned function takes it out again. */
  add(range: NumericRange, item: T): () => void;
  readonly size: number;
  /** Visits the ranges holding `value`; the same value again in one `round` is skipped. */
  collect(value: number, round: number, visit: (item: T) => void): void;
}

export function createNumericRanges<T>(): NumericRanges<T> {
  const stored = new Set<Stored<T>>();
  let sorted: Stored<T>[] = [];
  let maxHigh: number[] = [];
  let stale = false;
  let lastRound = 0;
  let lastValue = 0;

  function build(from: number, to: number): number {
    if (from >= to) return Number.NEGATIVE_INFINITY;
    const mid = (from + to) >>> 1;
    const high = Math.max((sorted[mid] as Stored<T>).high, build(from, mid), build(mid + 1, to));
    maxHigh[mid] = high;
    return high;
  }

  function rebuild(): void {
    sorted = [...stored].sort((a, b) => a.low - b.low);
    maxHigh = new Array<number>(sorted.length);
    build(0, sorted.length);
    stale = false;
  }

  function query(from: number, to: number, value: number, visit: (item: T) => void): void {
    while (from < to) {
      const mid = (from + to) >>> 1;
      if ((maxHigh[mid] as number) < value) return;
      query(from, mid, value, visit);
      const range = sorted[mid] as Stored<T>;
      if (range.low > value) return;
      if (contains(range, value)) visit(range.item);
      from = mid + 1;
    }
  }

  return {
    add(range, item) {
      const entry: Stored<T> = { ...range, item };
      stored.add(entry);
      stale = true;
      return () => {
        stored.delete(entry);
        stale = true;
      };
    },
    get size() {
      return stored.size;
    },
    collect(value, round, visit) {
      if (stored.size === 0 || (round === lastRound && value === lastValue)) return;
      lastRound = round;
      lastValue = value;
      if (stale) rebuild();
      query(0, sorted.length, value, visit);
    },
  };
}

function contains(range: NumericRange, value: number): boolean {
  const aboveLow = range.lowOpen ? value > range.low : value >= range.low;
  const belowHigh = range.highOpen ? value < range.high : value <= range.high;
  return aboveLow && belowHigh;
}
