import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePattern, InvalidEventPatternError } from "./index";

const VALID_PATTERNS: unknown[] = [
  { source: ["toolbus.orders"] },
  { source: ["a", "b"], "detail-type": [{ prefix: "Order" }], resources: [{ exists: true }] },
  {
    detail: {
      state: [{ "anything-but": ["stopped", "failed"] }],
      n: [{ numeric: [">", 0, "<=", 5] }],
    },
  },
  {
    detail: {
      s: [
        { suffix: { "equals-ignore-case": ".PNG" } },
        { "equals-ignore-case": "x" },
        null,
        true,
        5,
      ],
    },
  },
  {
    detail: {
      ip: [{ cidr: "10.0.0.0/8" }, { cidr: "2001:db8::/32" }],
      w: [{ wildcard: "a*b\\*c*" }],
    },
  },
  { detail: { missing: [{ exists: false }], items: { sku: [{ exists: false }] } } },
  {
    detail: {
      a: [{ "anything-but": { prefix: "x" } }, { "anything-but": { wildcard: ["*y", "z*"] } }],
    },
  },
  { $or: [{ source: ["x"] }, { detail: { $or: [{ a: [1] }, { b: [{ numeric: ["=", 2] }] }] } }] },
  // An object literal would take __proto__ as the prototype; JSON.parse makes it a field.
  JSON.parse('{"": [""], "constructor": [{"exists": false}], "__proto__": [{"exists": true}]}'),
];

/** Events shaped like bus events whose every field, nested ones included, is arbitrary JSON. */
const busEvent = fc.record(
  {
    source: fc.jsonValue(),
    "detail-type": fc.jsonValue(),
    resources: fc.jsonValue(),
    detail: fc.oneof(
      fc.jsonValue(),
      fc.dictionary(
        fc.constantFrom("state", "n", "s", "ip", "w", "missing", "items", "a", "b"),
        fc.jsonValue(),
      ),
    ),
  },
  { requiredKeys: [] },
);

describe("compiled patterns on arbitrary events", () => {
  it("never throw and always answer a boolean for any JSON value as the event", () => {
    const compiled = VALID_PATTERNS.map((pattern) => compilePattern(pattern));
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), busEvent), (event) => {
        for (const pattern of compiled) expect(typeof pattern.matches(event)).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });

  it("give the same answer for a pattern given as JSON text or as a parsed value", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID_PATTERNS), busEvent, (pattern, event) => {
        const fromText = compilePattern(JSON.stringify(pattern)).matches(event);
        expect(fromText).toBe(compilePattern(pattern).matches(event));
      }),
    );
  });
});

describe("compiling arbitrary input", () => {
  function compilesOrRefuses(input: unknown): void {
    try {
      compilePattern(input);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidEventPatternError);
    }
  }

  it("either succeeds or throws InvalidEventPatternError for any JSON value", () => {
    fc.assert(fc.property(fc.jsonValue(), compilesOrRefuses), { numRuns: 1000 });
  });

  it("either succeeds or throws InvalidEventPatternError for any text", () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), compilesOrRefuses), { numRuns: 500 });
  });

  it("either succeeds or throws InvalidEventPatternError for pattern-shaped JSON with random operands", () => {
    const operator = fc.constantFrom(
      "prefix",
      "suffix",
      "equals-ignore-case",
      "anything-but",
      "numeric",
      "exists",
      "cidr",
      "wildcard",
    );
    const leaf = fc.array(
      fc.oneof(
        fc.jsonValue({ maxDepth: 0 }),
        fc.dictionary(operator, fc.jsonValue(), { maxKeys: 2 }),
      ),
      { maxLength: 3 },
    );
    const pattern = fc.dictionary(
      fc.constantFrom("source", "detail", "$or", "prefix"),
      fc.oneof(leaf, fc.dictionary(fc.string(), leaf), fc.array(fc.dictionary(fc.string(), leaf))),
    );
    fc.assert(fc.property(pattern, compilesOrRefuses), { numRuns: 300 });
  });
});

describe("operators agree with simple reference definitions", () => {
  const scalar = fc.oneof(
    fc.string(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  );

  it("anything-but a string matches exactly the present scalars the exact match does not", () => {
    fc.assert(
      fc.property(fc.string(), scalar, (excluded, value) => {
        const exact = compilePattern({ f: [excluded] }).matches({ f: value });
        const anythingBut = compilePattern({ f: [{ "anything-but": excluded }] }).matches({
          f: value,
        });
        expect(anythingBut).toBe(!exact);
      }),
    );
  });

  it("a numeric range matches a number exactly when it lies between the bounds", () => {
    const bound = fc.double({ min: -5e9, max: 5e9, noNaN: true });
    fc.assert(
      fc.property(
        bound,
        bound,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (x, y, value) => {
          fc.pre(x < y);
          const inRange = compilePattern({ f: [{ numeric: [">=", x, "<", y] }] }).matches({
            f: value,
          });
          expect(inRange).toBe(value >= x && value < y);
        },
      ),
    );
  });

  it("prefix with equals-ignore-case matches like lower-casing both sides, for ASCII text", () => {
    const ascii = fc.string({ unit: fc.constantFrom("a", "B", "c", "D", "-", "1") });
    fc.assert(
      fc.property(ascii, ascii, (prefix, value) => {
        const matched = compilePattern({
          f: [{ prefix: { "equals-ignore-case": prefix } }],
        }).matches({ f: value });
        expect(matched).toBe(value.toLowerCase().startsWith(prefix.toLowerCase()));
      }),
    );
  });

  it("wildcard matches like the equivalent anchored regular expression", () => {
    const token = fc.constantFrom("a", "b", "*", "\\*", "\\\\");
    const wildcard = fc
      .array(token, { maxLength: 8 })
      .filter((tokens) => !tokens.some((t, i) => t === "*" && tokens[i + 1] === "*"));
    const value = fc.string({ unit: fc.constantFrom("a", "b", "*", "\\"), maxLength: 10 });
    fc.assert(
      fc.property(wildcard, value, (tokens, text) => {
        const source = tokens
          .map((t) => (t === "*" ? ".*" : t === "\\*" ? "\\*" : t === "\\\\" ? "\\\\" : t))
          .join("");
        const expected = new RegExp(`^${source}$`, "s").test(text);
        expect(compilePattern({ f: [{ wildcard: tokens.join("") }] }).matches({ f: text })).toBe(
          expected,
        );
      }),
      { numRuns: 500 },
    );
  });

  it("an IPv4 cidr matches exactly the addresses sharing its leading bits", () => {
    const toText = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join(".");
    fc.assert(
      fc.property(
        fc.nat(0xffffffff),
        fc.nat(0xffffffff),
        fc.integer({ min: 0, max: 32 }),
        (net, ip, bits) => {
          const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
          const expected = (net & mask) >>> 0 === (ip & mask) >>> 0;
          const matched = compilePattern({ f: [{ cidr: `${toText(net)}/${bits}` }] }).matches({
            f: toText(ip),
          });
          expect(matched).toBe(expected);
        },
      ),
    );
  });

  it("every generated IPv4 or IPv6 address falls in its own /32 or /128 block", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        const bits = ip.includes(":") ? 128 : 32;
        expect(compilePattern({ f: [{ cidr: `${ip}/${bits}` }] }).matches({ f: ip })).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("the whole IPv4 space, 0.0.0.0/0, contains every generated IPv4 address", () => {
    const everything = compilePattern({ f: [{ cidr: "0.0.0.0/0" }] });
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(everything.matches({ f: ip })).toBe(true);
      }),
    );
  });
});
