import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePattern, createPatternIndex, InvalidEventPatternError } from "./index";

// Patterns and events draw on one small vocabulary, so random events often meet random
// patterns. The strings include what trips case-insensitive and affix matching up: a final
// sigma, a dotted capital I (two code units once lower-cased), a Kelvin sign (lower-cases to
// "k"), an astral character, empty strings and IP addresses.
const FIELDS = ["a", "b", "c", "constructor"] as const;
const STRINGS = [
  "",
  "a",
  "ab",
  "abc",
  "AB",
  "Abc",
  "b",
  "bc",
  "k",
  "\u212a",
  "\u0130",
  "i\u0307",
  "\u03a3\u03a3",
  "\u03c3\u03c2",
  "\u{1f600}a",
  "a*b",
  "10.0.0.1",
  "::ffff:10.0.0.1",
  "2001:db8::1",
];
const NUMBERS = [-5, -1, 0, 1, 2.5, 5, 100, 5e9];

const text = fc.constantFrom(...STRINGS);
const nonEmptyText = fc.constantFrom(...STRINGS.filter((s) => s !== ""));
const number = fc.constantFrom(...NUMBERS);
const scalar = fc.oneof(text, number, fc.boolean(), fc.constant(null));
const textOrList = (arbitrary: fc.Arbitrary<string>) =>
  fc.oneof(arbitrary, fc.array(arbitrary, { minLength: 1, maxLength: 3 }));

const numeric = fc.oneof(
  fc.tuple(fc.constantFrom("=", "<", "<=", ">", ">="), number),
  fc
    .tuple(fc.constantFrom(">", ">="), number, fc.constantFrom("<", "<="), number)
    .filter(([, low, , high]) => low < high),
);

const matchValue = fc.oneof(
  scalar,
  fc.record({ prefix: fc.oneof(text, fc.record({ "equals-ignore-case": text })) }),
  fc.record({ suffix: fc.oneof(text, fc.record({ "equals-ignore-case": text })) }),
  fc.record({ "equals-ignore-case": text }),
  fc.record({
    wildcard: fc.constantFrom("*", "a*", "*b", "a*b", "*b*", "a*b*c", "\\*a*", "ab", "A*", "*c"),
  }),
  fc.record({ numeric }),
  fc.record({ exists: fc.boolean() }),
  fc.record({ cidr: fc.constantFrom("10.0.0.0/8", "::/0", "10.0.0.1/32", "2001:db8::/32") }),
  fc.record({
    "anything-but": fc.oneof(
      text,
      number,
      fc.array(text, { minLength: 1, maxLength: 3 }),
      fc.array(number, { minLength: 1, maxLength: 3 }),
      fc.record({ prefix: textOrList(nonEmptyText) }),
      fc.record({ suffix: textOrList(nonEmptyText) }),
      fc.record({ "equals-ignore-case": textOrList(text) }),
      fc.record({ wildcard: textOrList(fc.constantFrom("a*", "*b", "a*b")) }),
    ),
  }),
);

const leaf = fc.array(matchValue, { minLength: 1, maxLength: 3 });
const fieldName = fc.constantFrom(...FIELDS);

/** Patterns nesting objects and `$or` up to `depth` levels; explicit depths keep them small. */
function patternOf(depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (depth === 0) return fc.dictionary(fieldName, leaf, { minKeys: 1, maxKeys: 2 });
  const inner = patternOf(depth - 1);
  return fc
    .tuple(
      fc.dictionary(fieldName, fc.oneof(leaf, leaf, inner), { minKeys: 1, maxKeys: 2 }),
      fc.option(fc.array(inner, { minLength: 2, maxLength: 3 }), { freq: 4 }),
    )
    .map(([fields, or]) => (or === null ? fields : { ...fields, $or: or }));
}
const pattern = patternOf(2);

/** Events with nested objects, arrays of values, arrays of objects and nested arrays. */
function eventValueOf(depth: number): fc.Arbitrary<unknown> {
  if (depth === 0) return fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }));
  const inner = eventValueOf(depth - 1);
  return fc.oneof(
    scalar,
    scalar,
    fc.dictionary(fieldName, inner, { maxKeys: 4 }),
    fc.array(inner, { maxLength: 3 }),
  );
}
const event = fc.dictionary(fieldName, eventValueOf(3), { maxKeys: 4 });

/** What the index must answer: the ids whose compiled pattern matches, in order of addition. */
function oneByOne(patterns: ReadonlyMap<number, unknown>, value: unknown): number[] {
  return [...patterns]
    .filter(([, p]) => compilePattern(p).matches(value))
    .map(([id]) => id)
    .sort((x, y) => x - y);
}

describe("a pattern index", () => {
  it("matches exactly the patterns that match the event one by one", () => {
    let matched = 0;
    fc.assert(
      fc.property(
        fc.array(pattern, { minLength: 1, maxLength: 25 }),
        fc.array(event, { minLength: 1, maxLength: 10 }),
        (patterns, events) => {
          const index = createPatternIndex<number>();
          const byId = new Map(patterns.map((p, id) => [id, p] as const));
          for (const [id, p] of byId) index.add(id, p);
          for (const e of events) {
            const expected = oneByOne(byId, e);
            matched += expected.length;
            expect(index.match(e)).toEqual(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
    // The vocabulary is small so that matches are common: a run with none would prove nothing.
    expect(matched).toBeGreaterThan(100);
  });

  it("stays exact through any sequence of adds, replacements and removals", () => {
    const operation = fc.oneof(
      fc.record({ add: fc.nat({ max: 7 }), pattern }),
      fc.record({ remove: fc.nat({ max: 7 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.array(event, { minLength: 1, maxLength: 5 }),
        (operations, events) => {
          const index = createPatternIndex<number>();
          const model = new Map<number, unknown>();
          for (const op of operations) {
            if ("add" in op) {
              index.add(op.add, op.pattern);
              if (!model.has(op.add)) model.set(op.add, op.pattern);
              // A replacement keeps the id's place, as Map.set does in the model.
              else model.set(op.add, op.pattern);
            } else {
              expect(index.remove(op.remove)).toBe(model.delete(op.remove));
            }
            expect(index.size).toBe(model.size);
          }
          const order = [...model.keys()];
          for (const e of events) {
            const expected = order.filter((id) => compilePattern(model.get(id)).matches(e));
            expect(index.match(e)).toEqual(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("returns each matching id once, even when several of its anchors fire", () => {
    const index = createPatternIndex<string>();
    index.add("rule", { a: ["x", { prefix: "x" }, { suffix: "x" }], b: ["y"] });
    expect(index.match({ a: ["x", "xx"], b: "y" })).toEqual(["rule"]);
  });

  it("answers in the order ids were first added, a replaced pattern keeping its place", () => {
    const index = createPatternIndex<string>();
    index.add("first", { a: ["1"] });
    index.add("second", { a: [{ prefix: "1" }] });
    index.add("third", { b: [{ exists: true }] });
    index.add("first", { b: [{ numeric: [">", 0] }] });
    expect(index.match({ a: "1", b: 2 })).toEqual(["first", "second", "third"]);
    expect(index.match({ a: "1" })).toEqual(["second"]);
  });

  it("forgets a removed pattern, and a removed id can be added again", () => {
    const index = createPatternIndex<string>();
    index.add("rule", { a: [{ suffix: ".png" }] });
    expect(index.remove("rule")).toBe(true);
    expect(index.remove("rule")).toBe(false);
    expect(index.match({ a: "x.png" })).toEqual([]);
    expect(index.has("rule")).toBe(false);
    index.add("rule", { a: [{ suffix: ".jpg" }] });
    expect(index.match({ a: "x.jpg" })).toEqual(["rule"]);
  });

  it("refuses an invalid pattern as compilePattern does and keeps what the id held", () => {
    const index = createPatternIndex<string>();
    index.add("rule", { a: ["x"] });
    expect(() => index.add("rule", { a: [{ prefix: 5 }] })).toThrow(InvalidEventPatternError);
    expect(() => index.add("other", "{not json")).toThrow(InvalidEventPatternError);
    expect(index.size).toBe(1);
    expect(index.match({ a: "x" })).toEqual(["rule"]);
  });

  it("accepts patterns as JSON text", () => {
    const index = createPatternIndex<string>();
    index.add("rule", '{"detail": {"n": [{"numeric": [">=", 10, "<", 20]}]}}');
    expect(index.match({ detail: { n: 10 } })).toEqual(["rule"]);
    expect(index.match({ detail: { n: 20 } })).toEqual([]);
  });

  it("checks against every event only the patterns an event can match through absent fields", () => {
    const index = createPatternIndex<string>();
    index.add("absent", { a: [{ exists: false }] });
    index.add("or-absent", { $or: [{ a: ["x"] }, { b: [{ exists: false }] }] });
    index.add("anything-but", { a: [{ "anything-but": "x" }] });
    index.add("exact", { a: ["x"], b: [{ exists: false }] });
    expect(index.alwaysChecked).toBe(2);
    expect(index.match({ b: 1 })).toEqual(["absent"]);
    expect(index.match({ a: "y", b: 1 })).toEqual(["anything-but"]);
    index.remove("absent");
    expect(index.alwaysChecked).toBe(1);
  });

  it("reads the event's own keys where patterns name many fields at one level", () => {
    const index = createPatternIndex<string>();
    for (let i = 0; i < 100; i++) index.add(`f${i}`, { detail: { [`f${i}`]: [{ exists: true }] } });
    index.add("constructor", JSON.parse('{"detail": {"constructor": [{"exists": true}]}}'));
    const event = JSON.parse('{"detail": {"f3": 0, "f42": [null], "other": 1, "constructor": ""}}');
    expect(index.match(event)).toEqual(["f3", "f42", "constructor"]);
    // An inherited "constructor" is not a field of the event, for the index as for the matcher.
    expect(index.match({ detail: { f5: "x" } })).toEqual(["f5"]);
  });

  it("matches nothing for events that are not JSON objects", () => {
    const index = createPatternIndex<string>();
    index.add("absent", { a: [{ exists: false }] });
    for (const value of [null, "text", 5, [{ a: 1 }], undefined]) {
      expect(index.match(value)).toEqual([]);
    }
  });
});

describe("a pattern index on hostile events", () => {
  it("walks an array nested deeper than the call stack without throwing", () => {
    const index = createPatternIndex<string>();
    index.add("rule", { a: ["x"] });
    let deep: unknown = "x";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    // The compiled pattern gives up on such an event (no match); the index agrees.
    expect(index.match({ a: deep })).toEqual(
      compilePattern({ a: ["x"] }).matches({ a: deep }) ? ["rule"] : [],
    );
  });

  it("finds the one element of a huge array that a pattern names", () => {
    const index = createPatternIndex<number>();
    for (let i = 0; i < 1_000; i++) index.add(i, { tags: [`tag-${i}`] });
    const tags = Array.from({ length: 100_000 }, (_, i) => `other-${i}`);
    tags.push("tag-7");
    expect(index.match({ tags })).toEqual([7]);
  });

  it("reads the patterns a repeated value meets once, not once per array element", () => {
    const index = createPatternIndex<number>();
    // Anchored on "any value at v" and on ranges at n (w is absent-only, so no anchor there),
    // and each verified in constant time: what is left to count is gathering candidates.
    for (let i = 0; i < 2_000; i++) {
      const anchor = i % 2 ? { n: [{ numeric: [">", -i] }] } : { v: [{ exists: true }] };
      index.add(i, { ...anchor, w: [{ exists: false }] });
    }
    index.add(-1, { w: [1] });
    const workFor = (length: number) => {
      const event = { v: Array(length).fill("same"), n: Array(length).fill(1), w: 1 };
      expect(index.match(event)).toEqual([-1]);
      return { ...index.lastMatch };
    };
    const once = workFor(50_000);
    const twice = workFor(100_000);
    // The walk takes the two arrays, each of their elements and w: linear in the elements.
    expect(once.values).toBe(2 + 2 * 50_000 + 1);
    expect(twice.values).toBe(2 + 2 * 100_000 + 1);
    // Each pattern is read once, however long the arrays: not two thousand per element.
    expect(once.reads).toBe(2_001);
    expect(twice).toEqual({ ...once, values: twice.values });
  });

  it("walks a long string no deeper than the longest prefix stored", () => {
    const index = createPatternIndex<number>();
    const shared = "p".repeat(1_000);
    for (let i = 0; i < 1_000; i++) index.add(i, { s: [{ prefix: `${shared}${i}` }] });
    const stepsFor = (tail: number) => {
      expect(index.match({ s: `${shared}7${"q".repeat(tail)}` })).toEqual([7]);
      return index.lastMatch;
    };
    // The walk reads the shared run, the 7 and the first q, which no stored prefix continues
    // with: 1,002 characters however long the string, and it finds the one pattern.
    expect(stepsFor(1_000_000)).toEqual({ values: 1, affixSteps: 1_002, reads: 1, verified: 1 });
    expect(stepsFor(2_000_000).affixSteps).toBe(1_002);
  });

  it("slices a case-insensitive prefix once per stored length, however long the string", () => {
    const index = createPatternIndex<number>();
    for (let i = 0; i < 1_000; i++) {
      index.add(i, {
        s: [{ prefix: { "equals-ignore-case": `Run-${i % 10}-${"x".repeat(i % 3)}` } }],
      });
    }
    const stepsFor = (tail: number) => {
      index.match({ s: `RUN-7-${"q".repeat(tail)}` });
      return index.lastMatch.affixSteps;
    };
    // Three stored lengths (6, 7 and 8 characters): one slice of each.
    expect(stepsFor(1_000)).toBe(6 + 7 + 8);
    expect(stepsFor(1_000_000)).toBe(6 + 7 + 8);
  });
});
