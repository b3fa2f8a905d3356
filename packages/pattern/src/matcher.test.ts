import { describe, expect, it } from "vitest";
import { compilePattern, matchesPattern } from "./index";

const match = (pattern: unknown, event: unknown) => compilePattern(pattern).matches(event);

/** An event as the bus hands it to rules: the envelope plus a detail. */
function envelope(detail: unknown, overrides: Record<string, unknown> = {}) {
  return {
    version: "0",
    id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
    "detail-type": "Order Placed",
    source: "toolbus.orders",
    account: "123456789012",
    time: "2024-05-01T12:34:56Z",
    region: "us-east-1",
    resources: [
      "arn:aws:toolbus:us-east-1:123456789012:order/1",
      "arn:aws:toolbus:us-east-1:123456789012:shop/7",
    ],
    detail,
    ...overrides,
  };
}

describe("exact values", () => {
  it("matches a field equal to one of the listed strings", () => {
    expect(match({ source: ["toolbus.billing", "toolbus.orders"] }, envelope({}))).toBe(true);
  });

  it("does not match a string that is not listed", () => {
    expect(match({ source: ["toolbus.billing"] }, envelope({}))).toBe(false);
  });

  it("compares plain strings case-sensitively", () => {
    expect(match({ source: ["TOOLBUS.ORDERS"] }, envelope({}))).toBe(false);
  });

  it('does not match the string "5" against the number 5, nor the reverse', () => {
    expect(match({ detail: { n: [5] } }, envelope({ n: "5" }))).toBe(false);
    expect(match({ detail: { n: ["5"] } }, envelope({ n: 5 }))).toBe(false);
    expect(match({ detail: { n: [5] } }, envelope({ n: 5 }))).toBe(true);
    expect(match({ detail: { n: ["5"] } }, envelope({ n: "5" }))).toBe(true);
  });

  it("compares numbers by value, so 5 matches 5.0 and 3.018e2 matches 301.8", () => {
    expect(match('{"detail":{"n":[5]}}', JSON.parse('{"detail":{"n":5.0}}'))).toBe(true);
    expect(match('{"detail":{"n":[3.018e2]}}', envelope({ n: 301.8 }))).toBe(true);
  });

  it("matches null only against a JSON null, not a missing field or an empty string", () => {
    const pattern = { detail: { responseElements: [null] } };
    expect(match(pattern, envelope({ responseElements: null }))).toBe(true);
    expect(match(pattern, envelope({}))).toBe(false);
    expect(match(pattern, envelope({ responseElements: "" }))).toBe(false);
  });

  it("matches the empty string only against an empty string, not null", () => {
    const pattern = { detail: { eventVersion: [""] } };
    expect(match(pattern, envelope({ eventVersion: "" }))).toBe(true);
    expect(match(pattern, envelope({ eventVersion: null }))).toBe(false);
  });

  it("matches booleans only against booleans, not their string forms", () => {
    expect(match({ detail: { paid: [true] } }, envelope({ paid: true }))).toBe(true);
    expect(match({ detail: { paid: [true] } }, envelope({ paid: false }))).toBe(false);
    expect(match({ detail: { paid: [true] } }, envelope({ paid: "true" }))).toBe(false);
    expect(match({ detail: { paid: [false] } }, envelope({ paid: false }))).toBe(true);
  });

  it("does not match when the field is missing from the event", () => {
    expect(match({ detail: { state: ["running"] } }, envelope({}))).toBe(false);
  });

  it("matches a leaf listing strings, numbers, booleans and null together against any of them", () => {
    const pattern = { detail: { v: ["a", 1, true, null] } };
    for (const v of ["a", 1, true, null]) expect(match(pattern, envelope({ v }))).toBe(true);
    for (const v of ["b", 2, false, "null"]) expect(match(pattern, envelope({ v }))).toBe(false);
  });
});

describe("pattern structure", () => {
  it("requires every sibling field to match", () => {
    const pattern = { source: ["toolbus.orders"], "detail-type": ["Order Shipped"] };
    expect(match(pattern, envelope({}))).toBe(false);
    expect(match(pattern, envelope({}, { "detail-type": "Order Shipped" }))).toBe(true);
  });

  it("matches every envelope field like any other field", () => {
    const pattern = {
      version: ["0"],
      id: ["6a7e8feb-b491-4cf7-a9f1-bf3703467718"],
      "detail-type": ["Order Placed"],
      source: ["toolbus.orders"],
      account: ["123456789012"],
      time: ["2024-05-01T12:34:56Z"],
      region: ["us-east-1"],
      resources: ["arn:aws:toolbus:us-east-1:123456789012:shop/7"],
    };
    expect(match(pattern, envelope({}))).toBe(true);
    expect(match({ ...pattern, region: ["eu-west-1"] }, envelope({}))).toBe(false);
  });

  it("descends into nested objects", () => {
    const pattern = { detail: { order: { customer: { tier: ["gold"] } } } };
    expect(match(pattern, envelope({ order: { customer: { tier: "gold" } } }))).toBe(true);
    expect(match(pattern, envelope({ order: { customer: { tier: "silver" } } }))).toBe(false);
  });

  it("ignores event fields the pattern does not name", () => {
    expect(match({ detail: { a: ["1"] } }, envelope({ a: "1", b: "2", c: { d: [1] } }))).toBe(true);
  });

  it("matches an event array field when any of its elements is listed", () => {
    expect(
      match({ resources: ["arn:aws:toolbus:us-east-1:123456789012:order/1"] }, envelope({})),
    ).toBe(true);
    expect(
      match({ resources: ["arn:aws:toolbus:us-east-1:123456789012:order/2"] }, envelope({})),
    ).toBe(false);
  });

  it("flattens nested arrays of values in the event", () => {
    expect(match({ detail: { tags: ["c"] } }, envelope({ tags: [["a", "b"], ["c"]] }))).toBe(true);
  });

  it("does not match a leaf against an event array that holds none of its values", () => {
    expect(match({ detail: { tags: ["z"] } }, envelope({ tags: ["a", "b"] }))).toBe(false);
    expect(match({ detail: { tags: ["z"] } }, envelope({ tags: [] }))).toBe(false);
  });

  it("does not match a nested pattern against a scalar event value", () => {
    expect(match({ detail: { order: { id: ["1"] } } }, envelope({ order: "1" }))).toBe(false);
  });

  it("does not match a value leaf against an event object", () => {
    expect(match({ detail: { order: ["1"] } }, envelope({ order: { id: "1" } }))).toBe(false);
  });

  it("returns false for events that are not JSON objects", () => {
    const compiled = compilePattern({ source: [{ exists: false }] });
    for (const event of [null, undefined, [], [{}], "event", 42, true]) {
      expect(compiled.matches(event)).toBe(false);
    }
    expect(compiled.matches({})).toBe(true);
  });

  it("answers false instead of overflowing the stack on arrays nested deeper than it", () => {
    let deep: unknown = ["a"];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(match({ detail: { x: ["b"] } }, envelope({ x: deep }))).toBe(false);
    expect(match({ detail: { x: { y: ["b"] } } }, envelope({ x: deep }))).toBe(false);
  });

  it("does not mistake inherited properties such as constructor for event fields", () => {
    expect(match({ detail: { constructor: [{ exists: true }] } }, envelope({}))).toBe(false);
    expect(match({ detail: { toString: [{ exists: false }] } }, envelope({}))).toBe(true);
    expect(match({ detail: { constructor: ["x"] } }, envelope({ constructor: "x" }))).toBe(true);
  });

  it("matches a field named __proto__ as JSON.parse creates it, without touching prototypes", () => {
    const pattern = JSON.parse('{"detail": {"__proto__": ["x"]}}');
    expect(match(pattern, JSON.parse('{"detail": {"__proto__": "x"}}'))).toBe(true);
    expect(match(pattern, envelope({}))).toBe(false);
  });

  it("treats dots in pattern keys literally instead of as paths", () => {
    expect(match({ detail: { "a.b": ["x"] } }, envelope({ "a.b": "x" }))).toBe(true);
    expect(match({ detail: { "a.b": ["x"] } }, envelope({ a: { b: "x" } }))).toBe(false);
  });
});

describe("arrays of objects in the event", () => {
  const event = envelope({
    employees: [
      { firstName: "John", lastName: "Doe" },
      { firstName: "Anna", lastName: "Smith" },
      { firstName: "Peter", lastName: "Jones" },
    ],
  });

  it("matches a field inside an array of objects when any element matches", () => {
    expect(match({ detail: { employees: { firstName: ["Anna"] } } }, event)).toBe(true);
    expect(match({ detail: { employees: { firstName: ["Mary"] } } }, event)).toBe(false);
  });

  it("requires sibling fields to match within the same element", () => {
    expect(
      match({ detail: { employees: { firstName: ["Anna"], lastName: ["Smith"] } } }, event),
    ).toBe(true);
    expect(
      match({ detail: { employees: { firstName: ["Anna"], lastName: ["Jones"] } } }, event),
    ).toBe(false);
  });

  it("matches through arrays nested in arrays", () => {
    const nested = envelope({ employees: [[{ firstName: "John" }], [{ firstName: "Anna" }]] });
    expect(match({ detail: { employees: { firstName: ["Anna"] } } }, nested)).toBe(true);
  });

  it("matches nested arrays of objects at several levels", () => {
    const orders = envelope({
      orders: [
        { id: "1", lines: [{ sku: "A", qty: 1 }] },
        {
          id: "2",
          lines: [
            { sku: "B", qty: 5 },
            { sku: "C", qty: 2 },
          ],
        },
      ],
    });
    expect(match({ detail: { orders: { id: ["2"], lines: { sku: ["C"] } } } }, orders)).toBe(true);
    expect(match({ detail: { orders: { id: ["1"], lines: { sku: ["C"] } } } }, orders)).toBe(false);
  });

  it("does not match a positive field against an empty array", () => {
    expect(
      match({ detail: { employees: { firstName: ["Anna"] } } }, envelope({ employees: [] })),
    ).toBe(false);
  });
});

describe("prefix", () => {
  it("matches strings that start with the prefix", () => {
    expect(match({ time: [{ prefix: "2024-05-01" }] }, envelope({}))).toBe(true);
  });

  it("does not match strings that start differently", () => {
    expect(match({ time: [{ prefix: "2024-06" }] }, envelope({}))).toBe(false);
  });

  it("is case-sensitive", () => {
    expect(match({ source: [{ prefix: "TOOLBUS" }] }, envelope({}))).toBe(false);
  });

  it("does not match numbers, even ones whose digits start with the prefix", () => {
    expect(match({ detail: { n: [{ prefix: "12" }] } }, envelope({ n: 123 }))).toBe(false);
    expect(match({ detail: { n: [{ prefix: "12" }] } }, envelope({ n: "123" }))).toBe(true);
  });

  it("matches when any element of an event array has the prefix", () => {
    expect(
      match(
        { resources: [{ prefix: "arn:aws:toolbus:us-east-1:123456789012:shop/" }] },
        envelope({}),
      ),
    ).toBe(true);
  });

  it("treats an empty prefix as matching every string but nothing else", () => {
    expect(match({ detail: { s: [{ prefix: "" }] } }, envelope({ s: "" }))).toBe(true);
    expect(match({ detail: { s: [{ prefix: "" }] } }, envelope({ s: 0 }))).toBe(false);
  });

  it("ignores case when given equals-ignore-case", () => {
    const pattern = { detail: { service: [{ prefix: { "equals-ignore-case": "EventB" } }] } };
    expect(match(pattern, envelope({ service: "eventbridge" }))).toBe(true);
    expect(match(pattern, envelope({ service: "EVENTBRIDGE" }))).toBe(true);
    expect(match(pattern, envelope({ service: "lambda" }))).toBe(false);
    expect(match(pattern, envelope({ service: "Event" }))).toBe(false);
  });
});

describe("suffix", () => {
  it("matches strings that end with the suffix", () => {
    expect(match({ detail: { file: [{ suffix: ".png" }] } }, envelope({ file: "cat.png" }))).toBe(
      true,
    );
  });

  it("does not match strings that end differently", () => {
    expect(match({ detail: { file: [{ suffix: ".png" }] } }, envelope({ file: "cat.jpg" }))).toBe(
      false,
    );
    expect(match({ detail: { file: [{ suffix: ".png" }] } }, envelope({ file: "cat.PNG" }))).toBe(
      false,
    );
  });

  it("does not match numbers", () => {
    expect(match({ detail: { n: [{ suffix: "5" }] } }, envelope({ n: 15 }))).toBe(false);
  });

  it("ignores case when given equals-ignore-case", () => {
    const pattern = { detail: { file: [{ suffix: { "equals-ignore-case": ".PNG" } }] } };
    expect(match(pattern, envelope({ file: "cat.png" }))).toBe(true);
    expect(match(pattern, envelope({ file: "CAT.Png" }))).toBe(true);
    expect(match(pattern, envelope({ file: "cat.gif" }))).toBe(false);
    expect(match(pattern, envelope({ file: "png" }))).toBe(false);
  });
});

describe("equals-ignore-case", () => {
  it("matches the same string in any case", () => {
    expect(
      match({ detail: { name: [{ "equals-ignore-case": "alice" }] } }, envelope({ name: "ALICE" })),
    ).toBe(true);
    expect(
      match({ detail: { name: [{ "equals-ignore-case": "Ärger" }] } }, envelope({ name: "äRGER" })),
    ).toBe(true);
  });

  it("does not match a different string or a longer one", () => {
    expect(
      match(
        { detail: { name: [{ "equals-ignore-case": "alice" }] } },
        envelope({ name: "alicia" }),
      ),
    ).toBe(false);
    expect(
      match(
        { detail: { name: [{ "equals-ignore-case": "alice" }] } },
        envelope({ name: "alice " }),
      ),
    ).toBe(false);
  });

  it("does not match non-strings", () => {
    expect(
      match({ detail: { v: [{ "equals-ignore-case": "true" }] } }, envelope({ v: true })),
    ).toBe(false);
    expect(match({ detail: { v: [{ "equals-ignore-case": "5" }] } }, envelope({ v: 5 }))).toBe(
      false,
    );
  });
});

describe("anything-but", () => {
  it("matches any string except the excluded one", () => {
    const pattern = { detail: { state: [{ "anything-but": "initializing" }] } };
    expect(match(pattern, envelope({ state: "running" }))).toBe(true);
    expect(match(pattern, envelope({ state: "initializing" }))).toBe(false);
  });

  it("does not match a missing field", () => {
    expect(match({ detail: { state: [{ "anything-but": "initializing" }] } }, envelope({}))).toBe(
      false,
    );
  });

  it("does not match a field holding an object, which is not a value", () => {
    expect(
      match({ detail: { state: [{ "anything-but": "x" }] } }, envelope({ state: { a: 1 } })),
    ).toBe(false);
  });

  it("excludes every value of a list", () => {
    const pattern = { detail: { state: [{ "anything-but": ["stopped", "overloaded"] }] } };
    expect(match(pattern, envelope({ state: "stopped" }))).toBe(false);
    expect(match(pattern, envelope({ state: "overloaded" }))).toBe(false);
    expect(match(pattern, envelope({ state: "running" }))).toBe(true);
  });

  it("excludes numbers by value", () => {
    expect(match({ detail: { x: [{ "anything-but": 123 }] } }, envelope({ x: 123.0 }))).toBe(false);
    expect(match({ detail: { x: [{ "anything-but": [100, 200] }] } }, envelope({ x: 200 }))).toBe(
      false,
    );
    expect(match({ detail: { x: [{ "anything-but": [100, 200] }] } }, envelope({ x: 300 }))).toBe(
      true,
    );
  });

  it('is type-strict: excluding 5 lets the string "5" through and excluding "5" lets 5 through', () => {
    expect(match({ detail: { x: [{ "anything-but": 5 }] } }, envelope({ x: "5" }))).toBe(true);
    expect(match({ detail: { x: [{ "anything-but": "5" }] } }, envelope({ x: 5 }))).toBe(true);
    expect(match({ detail: { x: [{ "anything-but": ["5"] }] } }, envelope({ x: 5 }))).toBe(true);
  });

  it("matches null and booleans, which no string or number exclusion covers", () => {
    expect(match({ detail: { x: [{ "anything-but": "null" }] } }, envelope({ x: null }))).toBe(
      true,
    );
    expect(match({ detail: { x: [{ "anything-but": ["true"] }] } }, envelope({ x: true }))).toBe(
      true,
    );
  });

  it("matches an event array when at least one element is not excluded", () => {
    const pattern = { detail: { tags: [{ "anything-but": "internal" }] } };
    expect(match(pattern, envelope({ tags: ["internal", "public"] }))).toBe(true);
    expect(match(pattern, envelope({ tags: ["internal", "internal"] }))).toBe(false);
  });

  it("does not match an empty event array, which holds no value", () => {
    expect(
      match({ detail: { tags: [{ "anything-but": "internal" }] } }, envelope({ tags: [] })),
    ).toBe(false);
  });

  it("excludes by prefix and lets other strings and non-strings through", () => {
    const pattern = { region: [{ "anything-but": { prefix: "us-" } }] };
    expect(match(pattern, envelope({}))).toBe(false);
    expect(match(pattern, envelope({}, { region: "eu-west-1" }))).toBe(true);
    expect(
      match({ detail: { n: [{ "anything-but": { prefix: "1" } }] } }, envelope({ n: 10 })),
    ).toBe(true);
  });

  it("excludes by any prefix in a list", () => {
    const pattern = { region: [{ "anything-but": { prefix: ["us-", "ca-"] } }] };
    expect(match(pattern, envelope({}, { region: "ca-central-1" }))).toBe(false);
    expect(match(pattern, envelope({}, { region: "eu-west-1" }))).toBe(true);
  });

  it("excludes by suffix", () => {
    const pattern = { detail: { file: [{ "anything-but": { suffix: ".png" } }] } };
    expect(match(pattern, envelope({ file: "a.png" }))).toBe(false);
    expect(match(pattern, envelope({ file: "a.txt" }))).toBe(true);
  });

  it("excludes ignoring case with equals-ignore-case, for one string or a list", () => {
    const one = {
      detail: { state: [{ "anything-but": { "equals-ignore-case": "initializing" } }] },
    };
    expect(match(one, envelope({ state: "INITIALIZING" }))).toBe(false);
    expect(match(one, envelope({ state: "Running" }))).toBe(true);
    const list = {
      detail: { state: [{ "anything-but": { "equals-ignore-case": ["Stopped", "failed"] } }] },
    };
    expect(match(list, envelope({ state: "FAILED" }))).toBe(false);
    expect(match(list, envelope({ state: "stopped" }))).toBe(false);
    expect(match(list, envelope({ state: "running" }))).toBe(true);
  });

  it("excludes by wildcard, for one pattern or a list", () => {
    const one = { detail: { path: [{ "anything-but": { wildcard: "*/lib/*" } }] } };
    expect(match(one, envelope({ path: "/usr/lib/x.so" }))).toBe(false);
    expect(match(one, envelope({ path: "/usr/bin/x" }))).toBe(true);
    const list = { detail: { path: [{ "anything-but": { wildcard: ["*.tmp", "tmp/*"] } }] } };
    expect(match(list, envelope({ path: "tmp/a" }))).toBe(false);
    expect(match(list, envelope({ path: "a.tmp" }))).toBe(false);
    expect(match(list, envelope({ path: "a.txt" }))).toBe(true);
  });
});

describe("numeric", () => {
  it("matches numbers inside a range and not outside it, honouring open and closed ends", () => {
    const pattern = { detail: { c: [{ numeric: [">", 0, "<=", 5] }] } };
    expect(match(pattern, envelope({ c: 5 }))).toBe(true);
    expect(match(pattern, envelope({ c: 0.5 }))).toBe(true);
    expect(match(pattern, envelope({ c: 0 }))).toBe(false);
    expect(match(pattern, envelope({ c: 5.000001 }))).toBe(false);
    const closedOpen = { detail: { c: [{ numeric: [">=", 0, "<", 5] }] } };
    expect(match(closedOpen, envelope({ c: 0 }))).toBe(true);
    expect(match(closedOpen, envelope({ c: 5 }))).toBe(false);
  });

  it("matches one-sided bounds", () => {
    expect(match({ detail: { d: [{ numeric: ["<", 10] }] } }, envelope({ d: -1e9 }))).toBe(true);
    expect(match({ detail: { d: [{ numeric: ["<", 10] }] } }, envelope({ d: 10 }))).toBe(false);
    expect(match({ detail: { d: [{ numeric: [">=", -2.5] }] } }, envelope({ d: -2.5 }))).toBe(true);
    expect(match({ detail: { d: [{ numeric: [">", -2.5] }] } }, envelope({ d: -2.5 }))).toBe(false);
    expect(match({ detail: { d: [{ numeric: ["<=", 1] }] } }, envelope({ d: 1 }))).toBe(true);
  });

  it("matches equality by value", () => {
    expect(match({ detail: { x: [{ numeric: ["=", 3.018e2] }] } }, envelope({ x: 301.8 }))).toBe(
      true,
    );
    expect(match({ detail: { x: [{ numeric: ["=", 3] }] } }, envelope({ x: 3.5 }))).toBe(false);
  });

  it("never matches a numeric-looking string", () => {
    expect(match({ detail: { c: [{ numeric: [">", 0] }] } }, envelope({ c: "5" }))).toBe(false);
  });

  it("matches when any number in an event array is in range", () => {
    expect(match({ detail: { c: [{ numeric: [">", 10] }] } }, envelope({ c: [1, "20", 11] }))).toBe(
      true,
    );
    expect(match({ detail: { c: [{ numeric: [">", 10] }] } }, envelope({ c: [1, "20"] }))).toBe(
      false,
    );
  });

  it("does not match a missing field", () => {
    expect(match({ detail: { c: [{ numeric: [">", 0] }] } }, envelope({}))).toBe(false);
  });
});

describe("exists", () => {
  it("exists: true matches any present value, including null, false, 0 and the empty string", () => {
    const pattern = { detail: { v: [{ exists: true }] } };
    for (const v of ["x", "", 0, false, null, ["a"]])
      expect(match(pattern, envelope({ v }))).toBe(true);
  });

  it("exists: true does not match a missing field", () => {
    expect(match({ detail: { v: [{ exists: true }] } }, envelope({}))).toBe(false);
  });

  it("exists: false matches a missing field and nothing present", () => {
    const pattern = { detail: { v: [{ exists: false }] } };
    expect(match(pattern, envelope({}))).toBe(true);
    expect(match(pattern, envelope({ v: null }))).toBe(false);
    expect(match(pattern, envelope({ v: "" }))).toBe(false);
  });

  it("exists: false matches when the whole parent object is missing", () => {
    expect(match({ detail: { order: { coupon: [{ exists: false }] } } }, envelope({}))).toBe(true);
    expect(match({ extra: { coupon: [{ exists: false }] } }, envelope({}))).toBe(true);
  });

  it("treats a field holding an object as absent, since exists only applies to leaf values", () => {
    expect(match({ detail: { c: [{ exists: false }] } }, envelope({ c: { c1: 100 } }))).toBe(true);
    expect(match({ detail: { c: [{ exists: true }] } }, envelope({ c: { c1: 100 } }))).toBe(false);
  });

  it("treats an empty array as absent", () => {
    expect(match({ resources: [{ exists: false }] }, envelope({}, { resources: [] }))).toBe(true);
    expect(match({ resources: [{ exists: true }] }, envelope({}, { resources: [] }))).toBe(false);
    expect(match({ resources: [{ exists: true }] }, envelope({}))).toBe(true);
  });

  it("exists: false inside an array of objects requires the field to be absent from every element", () => {
    const pattern = { detail: { items: { sku: [{ exists: false }] } } };
    expect(match(pattern, envelope({ items: [{ name: "a" }, { name: "b" }] }))).toBe(true);
    expect(match(pattern, envelope({ items: [{ name: "a" }, { sku: "b" }] }))).toBe(false);
    expect(match(pattern, envelope({ items: [] }))).toBe(true);
  });

  it("exists: false next to a positive field applies to the element the positive field matched", () => {
    const pattern = { detail: { items: { type: ["book"], discount: [{ exists: false }] } } };
    expect(
      match(pattern, envelope({ items: [{ type: "pen", discount: 1 }, { type: "book" }] })),
    ).toBe(true);
    expect(
      match(pattern, envelope({ items: [{ type: "book", discount: 1 }, { type: "pen" }] })),
    ).toBe(false);
  });

  it("combines with values in the same leaf as an alternative", () => {
    const pattern = { detail: { coupon: [{ exists: false }, "WELCOME"] } };
    expect(match(pattern, envelope({}))).toBe(true);
    expect(match(pattern, envelope({ coupon: "WELCOME" }))).toBe(true);
    expect(match(pattern, envelope({ coupon: "OTHER" }))).toBe(false);
  });
});

describe("wildcard", () => {
  it("matches any run of characters, including none, at each star", () => {
    const pattern = { detail: { path: [{ wildcard: "dir/*.png" }] } };
    expect(match(pattern, envelope({ path: "dir/cat.png" }))).toBe(true);
    expect(match(pattern, envelope({ path: "dir/.png" }))).toBe(true);
    expect(match(pattern, envelope({ path: "dir/sub/cat.png" }))).toBe(true);
    expect(match(pattern, envelope({ path: "dir/cat.jpg" }))).toBe(false);
    expect(match(pattern, envelope({ path: "other/cat.png" }))).toBe(false);
  });

  it("matches several stars in order", () => {
    const pattern = { detail: { s: [{ wildcard: "a*b*c" }] } };
    expect(match(pattern, envelope({ s: "abc" }))).toBe(true);
    expect(match(pattern, envelope({ s: "a-b-b-c" }))).toBe(true);
    expect(match(pattern, envelope({ s: "acb" }))).toBe(false);
    expect(match(pattern, envelope({ s: "abcd" }))).toBe(false);
    expect(match({ detail: { s: [{ wildcard: "*ab*ab*" }] } }, envelope({ s: "xaby" }))).toBe(
      false,
    );
    expect(match({ detail: { s: [{ wildcard: "*ab*ab*" }] } }, envelope({ s: "abab" }))).toBe(true);
  });

  it("matches a pattern without stars exactly", () => {
    expect(match({ detail: { s: [{ wildcard: "abc" }] } }, envelope({ s: "abc" }))).toBe(true);
    expect(match({ detail: { s: [{ wildcard: "abc" }] } }, envelope({ s: "abcd" }))).toBe(false);
  });

  it("reads \\* as a literal star and \\\\ as a literal backslash", () => {
    expect(match({ detail: { s: [{ wildcard: "a\\*b" }] } }, envelope({ s: "a*b" }))).toBe(true);
    expect(match({ detail: { s: [{ wildcard: "a\\*b" }] } }, envelope({ s: "axb" }))).toBe(false);
    expect(match({ detail: { s: [{ wildcard: "C:\\\\*" }] } }, envelope({ s: "C:\\temp" }))).toBe(
      true,
    );
    expect(match({ detail: { s: [{ wildcard: "*\\**" }] } }, envelope({ s: "x*y" }))).toBe(true);
    expect(match({ detail: { s: [{ wildcard: "*\\**" }] } }, envelope({ s: "xy" }))).toBe(false);
  });

  it("does not match non-strings", () => {
    expect(match({ detail: { s: [{ wildcard: "*" }] } }, envelope({ s: 1 }))).toBe(false);
    expect(match({ detail: { s: [{ wildcard: "*" }] } }, envelope({ s: "" }))).toBe(true);
  });
});

describe("cidr", () => {
  it("matches IPv4 addresses inside the block and not outside it", () => {
    const pattern = { detail: { ip: [{ cidr: "10.0.0.0/24" }] } };
    expect(match(pattern, envelope({ ip: "10.0.0.33" }))).toBe(true);
    expect(match(pattern, envelope({ ip: "10.0.0.255" }))).toBe(true);
    expect(match(pattern, envelope({ ip: "10.0.1.1" }))).toBe(false);
  });

  it("handles /32, /0 and blocks written with host bits set", () => {
    expect(
      match({ detail: { ip: [{ cidr: "192.168.1.7/32" }] } }, envelope({ ip: "192.168.1.7" })),
    ).toBe(true);
    expect(
      match({ detail: { ip: [{ cidr: "192.168.1.7/32" }] } }, envelope({ ip: "192.168.1.8" })),
    ).toBe(false);
    expect(match({ detail: { ip: [{ cidr: "0.0.0.0/0" }] } }, envelope({ ip: "255.1.2.3" }))).toBe(
      true,
    );
    expect(
      match({ detail: { ip: [{ cidr: "10.1.2.3/8" }] } }, envelope({ ip: "10.200.0.1" })),
    ).toBe(true);
  });

  it("matches IPv6 addresses in compressed, full and mixed-case forms", () => {
    const pattern = { detail: { ip: [{ cidr: "2001:db8::/32" }] } };
    expect(match(pattern, envelope({ ip: "2001:db8::1" }))).toBe(true);
    expect(match(pattern, envelope({ ip: "2001:0DB8:0000:0000:0000:0000:0000:abcd" }))).toBe(true);
    expect(match(pattern, envelope({ ip: "2001:db9::1" }))).toBe(false);
    expect(
      match({ detail: { ip: [{ cidr: "::1/128" }] } }, envelope({ ip: "0:0:0:0:0:0:0:1" })),
    ).toBe(true);
    expect(match({ detail: { ip: [{ cidr: "fe80::/10" }] } }, envelope({ ip: "febf:1::" }))).toBe(
      true,
    );
    expect(match({ detail: { ip: [{ cidr: "fe80::/10" }] } }, envelope({ ip: "fec0::" }))).toBe(
      false,
    );
  });

  it("keeps address families apart, except IPv4-mapped IPv6 which counts as IPv4", () => {
    expect(match({ detail: { ip: [{ cidr: "::/0" }] } }, envelope({ ip: "10.0.0.1" }))).toBe(false);
    expect(
      match({ detail: { ip: [{ cidr: "0.0.0.0/0" }] } }, envelope({ ip: "2001:db8::1" })),
    ).toBe(false);
    expect(
      match({ detail: { ip: [{ cidr: "10.0.0.0/8" }] } }, envelope({ ip: "::ffff:10.1.2.3" })),
    ).toBe(true);
  });

  it("does not match strings that are not IP addresses, or numbers", () => {
    const pattern = { detail: { ip: [{ cidr: "10.0.0.0/8" }] } };
    for (const ip of ["10.0.0", "10.0.0.1.2", "10.0.0.256", "host.example", "", "10.0.0.1 "]) {
      expect(match(pattern, envelope({ ip }))).toBe(false);
    }
    expect(match(pattern, envelope({ ip: 10 }))).toBe(false);
  });
});

describe("$or", () => {
  it("matches when any branch matches", () => {
    const pattern = { $or: [{ source: ["toolbus.billing"] }, { "detail-type": ["Order Placed"] }] };
    expect(match(pattern, envelope({}))).toBe(true);
    expect(match(pattern, envelope({}, { "detail-type": "Other" }))).toBe(false);
  });

  it("is ANDed with sibling fields", () => {
    const pattern = {
      source: ["toolbus.orders"],
      $or: [{ detail: { total: [{ numeric: [">", 100] }] } }, { detail: { vip: [true] } }],
    };
    expect(match(pattern, envelope({ total: 150 }))).toBe(true);
    expect(match(pattern, envelope({ total: 5, vip: true }))).toBe(true);
    expect(match(pattern, envelope({ total: 5 }))).toBe(false);
    expect(match(pattern, envelope({ total: 150 }, { source: "toolbus.billing" }))).toBe(false);
  });

  it("ANDs the fields within one branch", () => {
    const pattern = { $or: [{ detail: { a: ["1"], b: ["2"] } }, { detail: { c: ["3"] } }] };
    expect(match(pattern, envelope({ a: "1" }))).toBe(false);
    expect(match(pattern, envelope({ a: "1", b: "2" }))).toBe(true);
  });

  it("works nested inside a branch", () => {
    const pattern = {
      source: ["toolbus.orders"],
      $or: [
        { detail: { metricName: ["CPU"] } },
        { detail: { metricType: ["M"], $or: [{ metricId: [1234] }, { spaceId: [1000] }] } },
      ],
    };
    expect(match(pattern, envelope({ metricType: "M", spaceId: 1000 }))).toBe(true);
    expect(match(pattern, envelope({ metricType: "M", spaceId: 1 }))).toBe(false);
    expect(match(pattern, envelope({ metricName: "CPU" }))).toBe(true);
  });

  it("works inside a nested object and requires each $or at different levels to hold", () => {
    const pattern = {
      $or: [{ source: ["toolbus.orders"] }, { source: ["toolbus.billing"] }],
      detail: { $or: [{ state: ["open"] }, { priority: [{ numeric: [">=", 3] }] }] },
    };
    expect(match(pattern, envelope({ state: "open" }))).toBe(true);
    expect(match(pattern, envelope({ priority: 4 }))).toBe(true);
    expect(match(pattern, envelope({ state: "closed", priority: 1 }))).toBe(false);
    expect(match(pattern, envelope({ state: "open" }, { source: "toolbus.other" }))).toBe(false);
  });

  it("applies to each element of an array of objects", () => {
    const pattern = {
      detail: { items: { $or: [{ sku: ["A"] }, { qty: [{ numeric: [">", 10] }] }] } },
    };
    expect(
      match(
        pattern,
        envelope({
          items: [
            { sku: "B", qty: 1 },
            { sku: "C", qty: 11 },
          ],
        }),
      ),
    ).toBe(true);
    expect(match(pattern, envelope({ items: [{ sku: "B", qty: 1 }] }))).toBe(false);
  });
});

describe("compiled patterns", () => {
  it("accept the same pattern as JSON text or as a parsed value", () => {
    const text = '{"source":["toolbus.orders"],"detail":{"n":[{"numeric":[">",1]}]}}';
    const event = envelope({ n: 2 });
    expect(compilePattern(text).matches(event)).toBe(true);
    expect(compilePattern(JSON.parse(text)).matches(event)).toBe(true);
  });

  it("can be reused across many events", () => {
    const compiled = compilePattern({ detail: { n: [{ numeric: [">=", 50] }] } });
    const results = Array.from({ length: 100 }, (_, n) => compiled.matches(envelope({ n })));
    expect(results.filter(Boolean)).toHaveLength(50);
  });

  it("matchesPattern gives the same answer as compiling and matching, for text and parsed patterns", () => {
    const text = '{"detail":{"state":["running"]}}';
    expect(matchesPattern(text, envelope({ state: "running" }))).toBe(true);
    expect(matchesPattern(text, envelope({ state: "stopped" }))).toBe(false);
    expect(matchesPattern(JSON.parse(text), envelope({ state: "running" }))).toBe(true);
  });

  it("does not depend on the pattern object after compiling", () => {
    const pattern = { detail: { state: ["running"] } };
    const compiled = compilePattern(pattern);
    pattern.detail.state[0] = "stopped";
    expect(compiled.matches(envelope({ state: "running" }))).toBe(true);
  });
});
