import { type Anchor, chooseAnchors } from "./anchors";
import { type CompiledPattern, compilePattern, readPattern } from "./compile";
import { createFieldIndex, type FieldIndex } from "./field-index";
import type { JsonObject } from "./json";
import type { Scalar } from "./types";
import { type MatchWork, noWork } from "./work";

/**
 * Many patterns, one lookup per event: which of them match it, at a cost that depends on the
 * event (the fields patterns name, the values it holds there) and on what it matches, not on
 * how many patterns there are.
 *
 * Each pattern is stored under its anchors (see anchors.ts): conditions on single fields, one
 * of which every matching event meets. The index keeps a tree of the field paths patterns name
 * and, at each path, lookups by value (exact values, prefix and suffix tries, numeric ranges,
 * ...). An event is walked along that tree only, so fields no pattern names cost nothing; each
 * value found there yields the patterns anchored on it, and each of those candidates is then
 * verified with its compiled pattern, so answers are exactly those of `compilePattern`.
 *
 * Patterns with no anchor, those an event can match through absent fields alone (each field
 * lists `exists: false` or is an object of such fields, and an `$or`, if any, has a branch
 * like that), are verified against every event. They are rare in practice and counted by
 * `alwaysChecked`.
 */
export interface PatternIndex<Id> {
  /**
   * Adds the pattern (JSON text or parsed) under `id`, replacing what `id` held before but
   * keeping its place in the order of `match`. Throws InvalidEventPatternError, as
   * `compilePattern` does, and then leaves the index unchanged. Returns the compiled pattern.
   */
  add(id: Id, pattern: string | unknown): CompiledPattern;
  /** Removes `id`; true if it was there. */
  remove(id: Id): boolean;
  has(id: Id): boolean;
  readonly size: number;
  /** How many patterns have no anchor and so are verified against every event. */
  readonly alwaysChecked: number;
  /** The ids whose pattern matches the event, each once, in the order they were first added. */
  match(event: unknown): Id[];
  /** What the last `match` did: the work that should follow the event, not the patterns. */
  readonly lastMatch: Readonly<MatchWork>;
}

interface Entry<Id> {
  id: Id;
  compiled: CompiledPattern;
  order: number;
  /** The last `match` call that took this entry as a candidate, so each is verified once. */
  seen: number;
  removers: Array<() => void>;
}

interface PathNode<Id> {
  children: Map<string, PathNode<Id>>;
  field: FieldIndex<Entry<Id>> | undefined;
  /** Entries anchored at or below this node, so emptied branches can be pruned. */
  anchored: number;
}

// Cost weights: how likely an event is to meet a condition of the kind, roughly. An exact
// value or a case-insensitive one is met by few events, a numeric range by more, "any string
// here" or "any value here" by nearly every event that has the field.
const WEIGHTS: Record<Anchor["condition"]["kind"], number> = {
  exact: 1,
  "ignore-case": 1,
  prefix: 2,
  suffix: 2,
  "prefix-ignore-case": 3,
  "suffix-ignore-case": 3,
  range: 4,
  "any-string": 12,
  "any-value": 16,
};

// Above this many named fields at one level, the walk reads the event's own keys instead.
const SMALL_LEVEL = 16;

function pathNode<Id>(): PathNode<Id> {
  return { children: new Map(), field: undefined, anchored: 0 };
}

/** Field names on Object.prototype resolve through the prototype on a plain read. */
function readField(object: JsonObject, key: string): unknown {
  return key in Object.prototype
    ? Object.hasOwn(object, key)
      ? object[key]
      : undefined
    : object[key];
}

export function createPatternIndex<Id>(): PatternIndex<Id> {
  const entries = new Map<Id, Entry<Id>>();
  const always = new Set<Entry<Id>>();
  const root = pathNode<Id>();
  let nextOrder = 0;
  let round = 0;
  // Reused between calls: matching is synchronous and never re-entered.
  const values: unknown[] = [];
  const nodes: PathNode<Id>[] = [];
  const candidates: Entry<Id>[] = [];
  const work = noWork();
  const visit = (entry: Entry<Id>) => {
    work.reads++;
    if (entry.seen === round) return;
    entry.seen = round;
    candidates.push(entry);
  };

  function findNode(path: readonly string[]): PathNode<Id> | undefined {
    let current: PathNode<Id> | undefined = root;
    for (const key of path) current = current?.children.get(key);
    return current;
  }

  function cost(anchor: Anchor): number {
    const load = findNode(anchor.path)?.field?.count(anchor.condition) ?? 0;
    return WEIGHTS[anchor.condition.kind] * (1 + load);
  }

  function anchor(entry: Entry<Id>, { path, condition }: Anchor): void {
    const trail: PathNode<Id>[] = [root];
    let current = root;
    for (const key of path) {
      let next = current.children.get(key);
      if (next === undefined) {
        next = pathNode();
        current.children.set(key, next);
      }
      current = next;
      trail.push(current);
    }
    current.field ??= createFieldIndex(work);
    const removeCondition = current.field.add(condition, entry);
    for (const node of trail) node.anchored++;
    entry.removers.push(() => {
      removeCondition();
      for (let depth = trail.length - 1; depth >= 0; depth--) {
        const node = trail[depth] as PathNode<Id>;
        node.anchored--;
        if (depth > 0 && node.anchored === 0) {
          (trail[depth - 1] as PathNode<Id>).children.delete(path[depth - 1] as string);
        }
      }
    });
  }

  function unregister(entry: Entry<Id>): void {
    for (const remove of entry.removers) remove();
    always.delete(entry);
  }

  /** Pushes the event's values at each named field below `node` onto the walk's stacks. */
  function pushFields(object: JsonObject, node: PathNode<Id>): void {
    const { children } = node;
    if (children.size <= SMALL_LEVEL) {
      for (const [key, child] of children) {
        const value = readField(object, key);
        if (value !== undefined) {
          values.push(value);
          nodes.push(child);
        }
      }
      return;
    }
    for (const key in object) {
      const child = children.get(key);
      if (child !== undefined && Object.hasOwn(object, key)) {
        values.push(object[key]);
        nodes.push(child);
      }
    }
  }

  /**
   * Collects the candidates. An explicit stack rather than recursion: events may nest arrays
   * deeper than the call stack, and each value is visited once whatever its depth.
   */
  function walk(event: JsonObject): void {
    pushFields(event, root);
    let walked = 0;
    while (values.length > 0) {
      walked++;
      const value = values.pop();
      const node = nodes.pop() as PathNode<Id>;
      if (typeof value !== "object" || value === null) {
        if (value !== undefined) node.field?.collect(value as Scalar, round, visit);
      } else if (Array.isArray(value)) {
        // Elements stay at the same path: arrays of values and of objects are both flattened.
        for (let i = 0; i < value.length; i++) {
          values.push(value[i]);
          nodes.push(node);
        }
      } else if (node.children.size > 0) {
        pushFields(value as JsonObject, node);
      }
    }
    work.values = walked;
  }

  return {
    add(id, pattern) {
      const parsed = readPattern(pattern);
      const compiled = compilePattern(parsed);
      const previous = entries.get(id);
      if (previous !== undefined) unregister(previous);
      const entry: Entry<Id> = {
        id,
        compiled,
        order: previous?.order ?? nextOrder++,
        seen: 0,
        removers: [],
      };
      entries.set(id, entry);
      const anchors = chooseAnchors(parsed, cost);
      if (anchors === undefined) always.add(entry);
      else for (const chosen of anchors) anchor(entry, chosen);
      return compiled;
    },
    remove(id) {
      const entry = entries.get(id);
      if (entry === undefined) return false;
      unregister(entry);
      entries.delete(id);
      return true;
    },
    has(id) {
      return entries.has(id);
    },
    get size() {
      return entries.size;
    },
    get alwaysChecked() {
      return always.size;
    },
    get lastMatch() {
      return work;
    },
    match(event) {
      work.values = 0;
      work.affixSteps = 0;
      work.reads = 0;
      work.verified = 0;
      if (typeof event !== "object" || event === null || Array.isArray(event)) return [];
      round++;
      try {
        walk(event as JsonObject);
        for (const entry of always) visit(entry);
        work.verified = candidates.length;
        const matched: Entry<Id>[] = [];
        for (const candidate of candidates) {
          if (candidate.compiled.matches(event)) matched.push(candidate);
        }
        if (matched.length === 0) return [];
        if (matched.length === 1) return [(matched[0] as Entry<Id>).id];
        matched.sort((a, b) => a.order - b.order);
        return matched.map((entry) => entry.id);
      } finally {
        values.length = 0;
        nodes.length = 0;
        candidates.length = 0;
      }
    },
  };
}
