import { describe, expect, it } from "vitest";
import {
  compilePattern,
  InvalidEventPatternError,
  MAX_PATTERN_DEPTH,
  MAX_PATTERN_ELEMENTS,
  matchesPattern,
  validatePattern,
} from "./index";

/** Compiles a pattern that must be refused and returns the error it was refused with. */
function rejection(pattern: unknown): InvalidEventPatternError {
  try {
    compilePattern(pattern);
  } catch (error) {
    if (error instanceof InvalidEventPatternError) return error;
    throw error;
  }
  throw new Error(`pattern was accepted: ${JSON.stringify(pattern)}`);
}

function nested(depth: number): unknown {
  let pattern: unknown = { leaf: ["x"] };
  for (let i = 0; i < depth; i++) pattern = { level: pattern };
  return pattern;
}

describe("invalid patterns", () => {
  it("are reported with AWS's wording, the reason and the field path", () => {
    const error = rejection({ detail: { name: [{ prefix: 5 }] } });
    expect(error.message).toBe(
      'Event pattern is not valid. Reason: "prefix" match pattern must be a string or {"equals-ignore-case": string}, got a number at detail.name',
    );
    expect(error.name).toBe("InvalidEventPatternError");
    expect(error).toBeInstanceOf(Error);
    expect(error.context).toEqual({
      reason:
        '"prefix" match pattern must be a string or {"equals-ignore-case": string}, got a number',
      path: "detail.name",
    });
  });

  it("leave out the path when the problem is the pattern as a whole", () => {
    expect(rejection("[1]").message).toBe(
      "Event pattern is not valid. Reason: an event pattern must be a JSON object, got an array",
    );
  });

  it("name the $or branch the problem is in", () => {
    const error = rejection({ $or: [{ a: ["x"] }, { detail: { b: "x" } }] });
    expect(error.message).toContain("at $or[1].detail.b");
  });

  it("keep the JSON parser's error as the cause of a JSON syntax error", () => {
    const error = rejection('{"source": [');
    expect(error.message).toContain("not valid JSON");
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("are refused the same way by validatePattern and matchesPattern", () => {
    expect(() => validatePattern({ source: "aws.ec2" })).toThrow(InvalidEventPatternError);
    expect(() => matchesPattern('{"source": "aws.ec2"}', {})).toThrow(InvalidEventPatternError);
    expect(validatePattern('{"source": ["aws.ec2"]}')).toBeUndefined();
  });

  const cases: Array<[string, unknown, string]> = [
    // The pattern as a whole
    ["text that is not JSON", "{source: [1]}", "not valid JSON"],
    ["JSON that is an array", "[]", "must be a JSON object, got an array"],
    ["JSON that is a string", '"source"', "must be a JSON object, got a string"],
    ["a number", 42, "must be a JSON object, got a number"],
    ["null", null, "must be a JSON object, got null"],
    ["undefined", undefined, "must be a JSON object, got undefined"],
    ["an empty object", {}, "empty objects are not allowed"],
    ["an empty nested object", { detail: {} }, "empty objects are not allowed at detail"],
    ["a Date instead of a plain object", new Date(0), "must be a JSON object, got a Date object"],
    // Fields
    [
      "a scalar leaf",
      { source: "aws.ec2" },
      '"source" must be an object or an array, got a string at source',
    ],
    [
      "a null leaf",
      { detail: { state: null } },
      '"state" must be an object or an array, got null at detail.state',
    ],
    [
      "an operator used as a field",
      { detail: { prefix: "x" } },
      "operators go inside the array of match values",
    ],
    ["an empty leaf array", { source: [] }, "empty arrays are not allowed at source"],
    [
      "an array nested in a leaf",
      { source: [["aws.ec2"]] },
      'match values must be strings, numbers, true, false, null or operator objects, got ["aws.ec2"]',
    ],
    [
      "a non-finite number",
      { detail: { n: [Number.NaN] } },
      "NaN is not a JSON number at detail.n",
    ],
    ["a function value", { detail: { n: [() => 1] } }, "got a function"],
    [
      "an undefined field value",
      { detail: { n: undefined } },
      '"n" must be an object or an array, got undefined',
    ],
    // Operator objects
    [
      "an unknown operator",
      { detail: { s: [{ contains: "x" }] } },
      'unrecognized match type "contains"; expected one of "prefix", "suffix"',
    ],
    [
      "an empty operator object",
      { detail: { s: [{}] } },
      "an empty object is not a match expression",
    ],
    [
      "two operators in one object",
      { detail: { s: [{ prefix: "a", suffix: "b" }] } },
      'only one key allowed in a match expression, got "prefix", "suffix"',
    ],
    [
      "a prefix that is an array",
      { s: [{ prefix: ["a"] }] },
      '"prefix" match pattern must be a string or {"equals-ignore-case": string}, got an array',
    ],
    [
      "a prefix object with another operator",
      { s: [{ prefix: { wildcard: "a*" } }] },
      'unsupported "prefix" pattern',
    ],
    [
      "a prefix equals-ignore-case that is a number",
      { s: [{ prefix: { "equals-ignore-case": 1 } }] },
      '"equals-ignore-case" match pattern must be a string, got a number',
    ],
    [
      "a suffix that is a number",
      { s: [{ suffix: 1 }] },
      '"suffix" match pattern must be a string or {"equals-ignore-case": string}, got a number',
    ],
    [
      "a suffix object with extra keys",
      { s: [{ suffix: { "equals-ignore-case": "a", x: 1 } }] },
      'unsupported "suffix" pattern',
    ],
    [
      "equals-ignore-case with a list",
      { s: [{ "equals-ignore-case": ["a"] }] },
      '"equals-ignore-case" match pattern must be a string, got an array',
    ],
    [
      "exists with a string",
      { s: [{ exists: "true" }] },
      '"exists" match pattern must be either true or false, got "true"',
    ],
    // wildcard
    [
      "a wildcard that is not a string",
      { s: [{ wildcard: 1 }] },
      '"wildcard" match pattern must be a string, got a number',
    ],
    [
      "consecutive wildcard stars",
      { s: [{ wildcard: "a**b" }] },
      'consecutive wildcard characters at position 2 in "a**b"',
    ],
    [
      "a wildcard escaping an ordinary character",
      { s: [{ wildcard: "a\\d" }] },
      "invalid escape at position 1",
    ],
    [
      "a wildcard ending in a lone backslash",
      { s: [{ wildcard: "a\\" }] },
      "invalid escape at position 1",
    ],
    // cidr
    [
      "a cidr without a prefix length",
      { ip: [{ cidr: "10.0.0.0" }] },
      'invalid "cidr": "10.0.0.0" is not a CIDR block',
    ],
    [
      "a cidr with an octet above 255",
      { ip: [{ cidr: "10.0.0.256/24" }] },
      "does not start with a valid IPv4 or IPv6 address",
    ],
    [
      "a cidr with three octets",
      { ip: [{ cidr: "10.0.0/24" }] },
      "does not start with a valid IPv4 or IPv6 address",
    ],
    [
      "an IPv4 cidr longer than 32 bits",
      { ip: [{ cidr: "10.0.0.0/33" }] },
      "prefix length above 32",
    ],
    [
      "an IPv6 cidr longer than 128 bits",
      { ip: [{ cidr: "2001:db8::/129" }] },
      "prefix length above 128",
    ],
    [
      "an IPv6 cidr with nine groups",
      { ip: [{ cidr: "1:2:3:4:5:6:7:8:9/64" }] },
      "does not start with a valid IPv4 or IPv6 address",
    ],
    [
      "an IPv6 cidr with two gaps",
      { ip: [{ cidr: "1::2::3/64" }] },
      "does not start with a valid IPv4 or IPv6 address",
    ],
    [
      "a cidr with a text prefix length",
      { ip: [{ cidr: "10.0.0.0/x" }] },
      'invalid prefix length "x"',
    ],
    [
      "a cidr that is a host name",
      { ip: [{ cidr: "example.com/8" }] },
      "does not start with a valid IPv4 or IPv6 address",
    ],
    [
      "a cidr that is a number",
      { ip: [{ cidr: 10 }] },
      '"cidr" match pattern must be a string, got a number',
    ],
    // numeric
    [
      "numeric that is not an array",
      { n: [{ numeric: ">" }] },
      '"numeric" must be an array, got ">"',
    ],
    ["an empty numeric array", { n: [{ numeric: [] }] }, '"numeric" must not be an empty array'],
    [
      "numeric starting with a number",
      { n: [{ numeric: [5, ">"] }] },
      '"numeric" must start with an operator string, got 5',
    ],
    [
      "an unknown numeric operator",
      { n: [{ numeric: ["=>", 5] }] },
      'unrecognized numeric operator "=>"',
    ],
    [
      "a numeric bound given as a string",
      { n: [{ numeric: [">", "5"] }] },
      'value of ">" in "numeric" must be a number, got "5"',
    ],
    [
      "a numeric operator without a value",
      { n: [{ numeric: ["<"] }] },
      'value of "<" in "numeric" must be a number, got undefined',
    ],
    [
      "= with a second bound",
      { n: [{ numeric: ["=", 5, "<", 6] }] },
      '"=" in "numeric" must be used alone',
    ],
    [
      "two lower bounds",
      { n: [{ numeric: [">", 1, ">", 2] }] },
      'at most one lower bound followed by one upper bound ("<" or "<="), got ">"',
    ],
    [
      "an upper bound before a lower bound",
      { n: [{ numeric: ["<", 5, ">", 1] }] },
      "an upper bound must come last",
    ],
    [
      "a range whose bottom is above its top",
      { n: [{ numeric: [">", 5, "<", 1] }] },
      "lower bound 5 must be less than upper bound 1",
    ],
    [
      "a range with equal bounds",
      { n: [{ numeric: [">=", 5, "<=", 5] }] },
      "lower bound 5 must be less than upper bound 5",
    ],
    [
      "a numeric bound beyond 5e9",
      { n: [{ numeric: [">", 6e9] }] },
      "numeric value 6000000000 is out of range",
    ],
    [
      "a numeric range with extra elements",
      { n: [{ numeric: [">", 1, "<", 5, "<", 6] }] },
      "at most two bounds are allowed",
    ],
    // anything-but
    [
      "anything-but null",
      { s: [{ "anything-but": null }] },
      '"anything-but" must be a string, a number, a non-empty array',
    ],
    ["anything-but a boolean", { s: [{ "anything-but": true }] }, "got a boolean"],
    [
      "anything-but an empty list",
      { s: [{ "anything-but": [] }] },
      '"anything-but" list must not be empty',
    ],
    [
      "anything-but a mixed list",
      { s: [{ "anything-but": ["a", 1] }] },
      "only strings or only numbers, not both",
    ],
    [
      "anything-but a list holding null",
      { s: [{ "anything-but": ["a", null] }] },
      "only strings or only numbers, got null",
    ],
    ["anything-but a number beyond 5e9", { s: [{ "anything-but": 6e9 }] }, "out of range"],
    [
      "anything-but numeric",
      { s: [{ "anything-but": { numeric: [">", 1] } }] },
      'unsupported "anything-but" pattern "numeric"',
    ],
    [
      "anything-but an empty object",
      { s: [{ "anything-but": {} }] },
      '"anything-but" object must name one of',
    ],
    [
      "anything-but with two operators",
      { s: [{ "anything-but": { prefix: "a", suffix: "b" } }] },
      'only one key allowed in an "anything-but" object',
    ],
    [
      "anything-but an empty prefix",
      { s: [{ "anything-but": { prefix: "" } }] },
      '"anything-but" "prefix" must not be an empty string',
    ],
    [
      "anything-but a numeric prefix",
      { s: [{ "anything-but": { prefix: 5 } }] },
      '"anything-but" "prefix" match pattern must be a string, got a number',
    ],
    [
      "anything-but an empty suffix list",
      { s: [{ "anything-but": { suffix: [] } }] },
      '"anything-but" "suffix" list must not be empty',
    ],
    [
      "anything-but equals-ignore-case with numbers",
      { s: [{ "anything-but": { "equals-ignore-case": [1] } }] },
      '"anything-but" "equals-ignore-case" match pattern must be a string',
    ],
    [
      "anything-but an invalid wildcard",
      { s: [{ "anything-but": { wildcard: "**" } }] },
      "consecutive wildcard characters",
    ],
    // $or
    [
      "$or holding an object",
      { $or: { a: ["x"] } },
      '"$or" must be an array of at least two objects, got an object at $or',
    ],
    [
      "$or with one branch",
      { $or: [{ a: ["x"] }] },
      '"$or" must contain at least two objects, got 1',
    ],
    [
      "$or with a non-object branch",
      { $or: [{ a: ["x"] }, ["b"]] },
      'each "$or" element must be an object, got an array at $or[1]',
    ],
    [
      "$or with an empty branch",
      { $or: [{ a: ["x"] }, {}] },
      "empty objects are not allowed at $or[1]",
    ],
    [
      "an operator name used as a field inside $or",
      { $or: [{ prefix: ["x"] }, { b: ["y"] }] },
      '"prefix" is a reserved keyword and cannot be used as a field name inside "$or" at $or[0].prefix',
    ],
    [
      "a reserved name nested inside $or",
      { $or: [{ a: { numeric: ["x"] } }, { b: ["y"] }] },
      '"numeric" is a reserved keyword',
    ],
    [
      "an invalid leaf inside a nested $or",
      { detail: { $or: [{ a: ["x"] }, { b: [{ numeric: ["<"] }] }] } },
      "at detail.$or[1].b",
    ],
  ];

  it.each(cases)("rejects %s", (_, pattern, expected) => {
    expect(rejection(pattern).message).toContain(expected);
  });
});

describe("pattern limits", () => {
  it(`accepts patterns nested ${MAX_PATTERN_DEPTH} levels deep`, () => {
    expect(() => compilePattern(nested(MAX_PATTERN_DEPTH))).not.toThrow();
  });

  it("rejects patterns nested deeper than the limit", () => {
    expect(rejection(nested(MAX_PATTERN_DEPTH + 1)).message).toContain(
      `nests deeper than ${MAX_PATTERN_DEPTH} levels`,
    );
  });

  it("rejects a self-referencing parsed pattern instead of recursing forever", () => {
    const pattern: Record<string, unknown> = { source: ["x"] };
    pattern.detail = pattern;
    expect(rejection(pattern).message).toContain("nests deeper than");
  });

  it("rejects patterns with more fields and match values than the limit", () => {
    const values = Array.from({ length: MAX_PATTERN_ELEMENTS }, (_, i) => `v${i}`);
    expect(rejection({ source: values }).message).toContain(
      `more than ${MAX_PATTERN_ELEMENTS} fields and match values at source`,
    );
    expect(() => compilePattern({ source: values.slice(1) })).not.toThrow();
  });
});
