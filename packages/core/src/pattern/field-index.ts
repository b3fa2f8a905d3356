import { type AffixTrie, createAffixTrie } from "./affix-trie";
import type { AnchorCondition } from "./anchors";
import { createNumericRanges, type NumericRanges } from "./numeric-ranges";
import type { Scalar } from "./types";

/**
 * The anchors stored at one field path, looked up by a value the event holds there. Each
 * structure is created on first use, so a path only pays for the kinds of condition that
 * patterns put on it.
 */
export interface FieldIndex<T> {
  add(condition: AnchorCondition, item: T): () => void;
  /** How many items the condition's own slot holds: the index's measure of its selectivity. */
  count(condition: AnchorCondition): number;
  /** Calls `visit` with every item whose condition holds for `value` (repeats possible). */
  collect(value: Scalar, visit: (item: T) => void): void;
}

/**
 * Case-insensitive prefixes and suffixes, bucketed by the pattern text's length. The matcher
 * lower-cases that slice of the value, and lower-casing is not per character (a final sigma
 * depends on what follows; İ becomes two code units), so the index does exactly the same:
 * one slice per distinct length no longer than the value.
 */
class IgnoreCaseAffixes<T> {
  private readonly byLength = new Map<number, Map<string, Set<T>>>();
  private lengths: number[] = [];

  constructor(private readonly fromEnd: boolean) {}

  add(length: number, lowered: string, item: T): () => void {
    let texts = this.byLength.get(length);
    if (texts === undefined) {
      texts = new Map();
      this.byLength.set(length, texts);
      this.lengths = [...this.byLength.keys()].sort((a, b) => a - b);
    }
    const items = addTo(texts, lowered, item);
    return () => {
      items.delete(item);
      if (items.size > 0) return;
      texts.delete(lowered);
      if (texts.size > 0) return;
      this.byLength.delete(length);
      this.lengths = this.lengths.filter((other) => other !== length);
    };
  }

  count(length: number, lowered: string): number {
    return this.byLength.get(length)?.get(lowered)?.size ?? 0;
  }

  collect(value: string, visit: (item: T) => void): void {
    for (const length of this.lengths) {
      if (length > value.length) return;
      const slice = this.fromEnd ? value.slice(value.length - length) : value.slice(0, length);
      const items = this.byLength.get(length)?.get(slice.toLowerCase());
      if (items !== undefined) for (const item of items) visit(item);
    }
  }
}

function addTo<K, T>(map: Map<K, Set<T>>, key: K, item: T): Set<T> {
  let items = map.get(key);
  if (items === undefined) {
    items = new Set();
    map.set(key, items);
  }
  items.add(item);
  return items;
}

function removerFrom<K, T>(map: Map<K, Set<T>>, key: K, item: T): () => void {
  const items = addTo(map, key, item);
  return () => {
    items.delete(item);
    if (items.size === 0 && map.get(key) === items) map.delete(key);
  };
}

export function createFieldIndex<T>(): FieldIndex<T> {
  // Strings, numbers, booleans and null share one map: Map keys compare by type and value
  // (SameValueZero), as the matcher does, so "5" and 5 stay apart and 0 meets -0.
  const exact = new Map<Scalar, Set<T>>();
  const ignoreCase = new Map<string, Set<T>>();
  let prefixes: AffixTrie<T> | undefined;
  let suffixes: AffixTrie<T> | undefined;
  let prefixesIgnoreCase: IgnoreCaseAffixes<T> | undefined;
  let suffixesIgnoreCase: IgnoreCaseAffixes<T> | undefined;
  let ranges: NumericRanges<T> | undefined;
  const anyString = new Set<T>();
  const anyValue = new Set<T>();

  return {
    add(condition, item) {
      switch (condition.kind) {
        case "exact":
          return removerFrom(exact, condition.value, item);
        case "ignore-case":
          return removerFrom(ignoreCase, condition.lowered, item);
        case "prefix":
          prefixes ??= createAffixTrie("prefix");
          return prefixes.add(condition.text, item);
        case "suffix":
          suffixes ??= createAffixTrie("suffix");
          return suffixes.add(condition.text, item);
        case "prefix-ignore-case":
          prefixesIgnoreCase ??= new IgnoreCaseAffixes(false);
          return prefixesIgnoreCase.add(condition.length, condition.lowered, item);
        case "suffix-ignore-case":
          suffixesIgnoreCase ??= new IgnoreCaseAffixes(true);
          return suffixesIgnoreCase.add(condition.length, condition.lowered, item);
        case "range":
          ranges ??= createNumericRanges();
          return ranges.add(condition, item);
        case "any-string":
          anyString.add(item);
          return () => anyString.delete(item);
        case "any-value":
          anyValue.add(item);
          return () => anyValue.delete(item);
      }
    },
    count(condition) {
      switch (condition.kind) {
        case "exact":
          return exact.get(condition.value)?.size ?? 0;
        case "ignore-case":
          return ignoreCase.get(condition.lowered)?.size ?? 0;
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
          return anyString.size;
        case "any-value":
          return anyValue.size;
      }
    },
    collect(value, visit) {
      // The size checks skip creating iterators over empty sets, on every value of every event.
      if (exact.size > 0) {
        const same = exact.get(value);
        if (same !== undefined) for (const item of same) visit(item);
      }
      if (anyValue.size > 0) for (const item of anyValue) visit(item);
      if (typeof value === "string") {
        if (anyString.size > 0) for (const item of anyString) visit(item);
        prefixes?.collect(value, visit);
        suffixes?.collect(value, visit);
        prefixesIgnoreCase?.collect(value, visit);
        suffixesIgnoreCase?.collect(value, visit);
        if (ignoreCase.size > 0) {
          const lowered = ignoreCase.get(value.toLowerCase());
          if (lowered !== undefined) for (const item of lowered) visit(item);
        }
      } else if (typeof value === "number") {
        ranges?.collect(value, visit);
      }
    },
  };
}
