import { type AffixTrie, createAffixTrie } from "./affix-trie";
import type { AnchorCondition } from "./anchors";
import { type Bucket, bucket, drain } from "./bucket";
import { createNumericRanges, type NumericRanges } from "./numeric-ranges";
import type { Scalar } from "./types";
import type { MatchWork } from "./work";

/**
 * The anchors stored at one field path, looked up by a value the event holds there. Each
 * structure is created on first use, so a path only pays for the kinds of condition that
 * patterns put on it.
 */
export interface FieldIndex<T> {
  add(condition: AnchorCondition, item: T): () => void;
  /** How many items the condition's own slot holds: the index's measure of its selectivity. */
  count(condition: AnchorCondition): number;
  /**
   * Calls `visit` with every item whose condition holds for `value` (repeats possible). A
   * slot already read in the same `round` (one per event) is not read again.
   */
  collect(value: Scalar, round: number, visit: (item: T) => void): void;
}

/**
 * Case-insensitive prefixes and suffixes, bucketed by the pattern text's length. The matcher
 * lower-cases that slice of the value, and lower-casing is not per character (a final sigma
 * depends on what follows; İ becomes two code units), so the index does exactly the same:
 * one slice per distinct length no longer than the value.
 */
class IgnoreCaseAffixes<T> {
  private readonly byLength = new Map<number, Map<string, Bucket<T>>>();
  private lengths: number[] = [];

  constructor(
    private readonly fromEnd: boolean,
    private readonly work: MatchWork,
  ) {}

  add(length: number, lowered: string, item: T): () => void {
    let texts = this.byLength.get(length);
    if (texts === undefined) {
      texts = new Map();
      this.byLength.set(length, texts);
      this.lengths = [...this.byLength.keys()].sort((a, b) => a - b);
    }
    const items = addTo(texts, lowered, item);
    return () => {
      items.items.delete(item);
      if (items.items.size > 0) return;
      texts.delete(lowered);
      if (texts.size > 0) return;
      this.byLength.delete(length);
      this.lengths = this.lengths.filter((other) => other !== length);
    };
  }

  count(length: number, lowered: string): number {
    return this.byLength.get(length)?.get(lowered)?.items.size ?? 0;
  }

  collect(value: string, round: number, visit: (item: T) => void): void {
    for (const length of this.lengths) {
      if (length > value.length) return;
      this.work.affixSteps += length;
      const slice = this.fromEnd ? value.slice(value.length - length) : value.slice(0, length);
      const items = this.byLength.get(length)?.get(slice.toLowerCase());
      if (items !== undefined) drain(items, round, visit);
    }
  }
}

function addTo<K, T>(map: Map<K, Bucket<T>>, key: K, item: T): Bucket<T> {
  let items = map.get(key);
  if (items === undefined) {
    items = bucket();
    map.set(key, items);
  }
  items.items.add(item);
  return items;
}

function removerFrom<K, T>(map: Map<K, Bucket<T>>, key: K, item: T): () => void {
  const items = addTo(map, key, item);
  return () => {
    items.items.delete(item);
    if (items.items.size === 0 && map.get(key) === items) map.delete(key);
  };
}

/** `work` counts what lookups cost per event value (see MatchWork). */
export function createFieldIndex<T>(work: MatchWork): FieldIndex<T> {
  // Strings, numbers, booleans and null share one map: Map keys compare by type and value
  // (SameValueZero), as the matcher does, so "5" and 5 stay apart and 0 meets -0.
  const exact = new Map<Scalar, Bucket<T>>();
  const ignoreCase = new Map<string, Bucket<T>>();
  let prefixes: AffixTrie<T> | undefined;
  let suffixes: AffixTrie<T> | undefined;
  let prefixesIgnoreCase: IgnoreCaseAffixes<T> | undefined;
  let suffixesIgnoreCase: IgnoreCaseAffixes<T> | undefined;
  let ranges: NumericRanges<T> | undefined;
  const anyString = bucket<T>();
  const anyValue = bucket<T>();

  return {
    add(condition, item) {
      switch (condition.kind) {
        case "exact":
          return removerFrom(exact, condition.value, item);
        case "ignore-case":
          return removerFrom(ignoreCase, condition.lowered, item);
        case "prefix":
          prefixes ??= createAffixTrie("prefix", work);
          return prefixes.add(condition.text, item);
        case "suffix":
          suffixes ??= createAffixTrie("suffix", work);
          return suffixes.add(condition.text, item);
        case "prefix-ignore-case":
          prefixesIgnoreCase ??= new IgnoreCaseAffixes(false, work);
          return prefixesIgnoreCase.add(condition.length, condition.lowered, item);
        case "suffix-ignore-case":
          suffixesIgnoreCase ??= new IgnoreCaseAffixes(true, work);
          return suffixesIgnoreCase.add(condition.length, condition.lowered, item);
        case "range":
          ranges ??= createNumericRanges();
          return ranges.add(condition, item);
        case "any-string":
          anyString.items.add(item);
          return () => anyString.items.delete(item);
        case "any-value":
          anyValue.items.add(item);
          return () => anyValue.items.delete(item);
      }
    },
    count(condition) {
      switch (condition.kind) {
        case "exact":
          return exact.get(condition.value)?.items.size ?? 0;
        case "ignore-case":
          return ignoreCase.get(condition.lowered)?.items.size ?? 0;
        case "prefix":
          return prefixes?.count(condition.text) ?? 0;
        case "suffix":
          return suffixes?.count(condition.text) ?? 0;
        case "prefix-ignore-case":
          return prefixesIgnoreCase?.count(condition.length, condition.lowered) ?? 0;
        case "suffix-ignore-case":
          return suffixesIgnoreCase?.count(condition.length, condition.lowered) ?? 0;
        // Every range on the path is a neighbour that a value may fall into as well.
        case "range":
          return ranges?.size ?? 0;
        case "any-string":
          return anyString.items.size;
        case "any-value":
          return anyValue.items.size;
      }
    },
    collect(value, round, visit) {
      if (exact.size > 0) {
        const same = exact.get(value);
        if (same !== undefined) drain(same, round, visit);
      }
      drain(anyValue, round, visit);
      if (typeof value === "string") {
        drain(anyString, round, visit);
        prefixes?.collect(value, round, visit);
        suffixes?.collect(value, round, visit);
        prefixesIgnoreCase?.collect(value, round, visit);
        suffixesIgnoreCase?.collect(value, round, visit);
        if (ignoreCase.size > 0) {
          const lowered = ignoreCase.get(value.toLowerCase());
          if (lowered !== undefined) drain(lowered, round, visit);
        }
      } else if (typeof value === "number") {
        ranges?.collect(value, round, visit);
      }
    },
  };
}
