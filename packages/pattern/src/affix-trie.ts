import { type Bucket, bucket, drain } from "./bucket";
import type { MatchWork } from "./work";

/**
 * A trie over UTF-16 code units, for the index's prefix and suffix conditions: walking an event
 * string visits one node per code unit, at most as deep as the longest text stored, so the work
 * per string is bounded by the patterns' texts (not the string's length) plus what it finds.
 * A suffix trie stores texts reversed and is walked from the string's end.
 */

interface TrieNode<T> {
  children: Map<number, TrieNode<T>> | undefined;
  items: Bucket<T> | undefined;
}

function node<T>(): TrieNode<T> {
  return { children: undefined, items: undefined };
}

export interface AffixTrie<T> {
  /** Stores `item` under `text`; the returned function takes it out again. */
  add(text: string, item: T): () => void;
  /** How many items are stored under exactly `text`. */
  count(text: string): number;
  /** Calls `visit` with every item whose text is a prefix (suffix) of `value`. */
  collect(value: string, round: number, visit: (item: T) => void): void;
}

/** `work.affixSteps` counts the nodes each lookup steps through. */
export function createAffixTrie<T>(direction: "prefix" | "suffix", work: MatchWork): AffixTrie<T> {
  const root = node<T>();
  const fromEnd = direction === "suffix";
  const codeAt = (text: string, i: number) =>
    fromEnd ? text.charCodeAt(text.length - 1 - i) : text.charCodeAt(i);

  function find(text: string): TrieNode<T> | undefined {
    let current: TrieNode<T> | undefined = root;
    for (let i = 0; i < text.length && current !== undefined; i++) {
      current = current.children?.get(codeAt(text, i));
    }
    return current;
  }

  return {
    add(text, item) {
      // The path from the root is kept so removal can prune nodes left empty, which keeps a
      // bus whose rules churn from growing the trie forever.
      const path: TrieNode<T>[] = [root];
      let current = root;
      for (let i = 0; i < text.length; i++) {
        const code = codeAt(text, i);
        current.children ??= new Map();
        let next = current.children.get(code);
        if (next === undefined) {
          next = node<T>();
          current.children.set(code, next);
        }
        current = next;
        path.push(current);
      }
      current.items ??= bucket();
      current.items.items.add(item);
      return () => {
        const target = path[path.length - 1] as TrieNode<T>;
        target.items?.items.delete(item);
        for (let depth = path.length - 1; depth > 0; depth--) {
          const child = path[depth] as TrieNode<T>;
          if ((child.items?.items.size ?? 0) > 0 || (child.children?.size ?? 0) > 0) return;
          (path[depth - 1] as TrieNode<T>).children?.delete(codeAt(text, depth - 1));
        }
      };
    },
    count(text) {
      return find(text)?.items?.items.size ?? 0;
    },
    collect(value, round, visit) {
      let current: TrieNode<T> | undefined = root;
      let i = 0;
      for (; current !== undefined; i++) {
        if (current.items !== undefined) drain(current.items, round, visit);
        if (i === value.length || current.children === undefined) break;
        current = current.children.get(codeAt(value, i));
      }
      work.affixSteps += i;
    },
  };
}
