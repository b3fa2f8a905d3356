import {
  CreateEventBusCommand,
  type EventBridgeClient,
  InvalidEventPatternException,
  PutEventsCommand,
  PutRuleCommand,
  TestEventPatternCommand,
} from "@aws-sdk/client-eventbridge";
import { LocalEventBus, localEventBridgeClient } from "@toolbus/local/bus";
import { compilePattern, InvalidEventPatternError } from "@toolbus/pattern";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Extends packages/pattern/src/properties.test.ts (bare values) to whole EventBridge
// envelopes and to the bus's own API, reached in-process through the AWS SDK.

const BUS = "fuzz-bus";
/** PutRule's EventPattern: "Length Constraints: Maximum length of 4096" in the API reference. */
const MAX_EVENT_PATTERN_LENGTH = 4096;

const scalar = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.double({ noNaN: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("10.0.0.1", "2001:db8::1", "toolbus", "ToolCallScheduled", "", "*"),
);

const operator = fc.oneof(
  scalar,
  fc.record({ prefix: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 1 })) }),
  fc.record({ suffix: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 1 })) }),
  fc.record({ "equals-ignore-case": fc.oneof(fc.string(), fc.integer()) }),
  fc.record({ wildcard: fc.stringMatching(/^[a-z*\\]{0,12}$/) }),
  fc.record({ exists: fc.oneof(fc.boolean(), scalar) }),
  fc.record({ cidr: fc.oneof(fc.string(), fc.constantFrom("10.0.0.0/8", "::/0", "1.2.3.4/33")) }),
  fc.record({
    numeric: fc.array(fc.oneof(fc.constantFrom("<", "<=", "=", ">", ">=", "!"), fc.double()), {
      maxLength: 5,
    }),
  }),
  fc.record({
    "anything-but": fc.oneof(
      scalar,
      fc.array(scalar, { maxLength: 4 }),
      fc.record({ prefix: fc.string() }),
      fc.record({ wildcard: fc.array(fc.string(), { maxLength: 3 }) }),
    ),
  }),
  fc.jsonValue({ maxDepth: 2 }),
);

const leaf = fc.oneof(fc.array(operator, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }));
const fieldName = fc.oneof(
  fc.constantFrom("source", "detail-type", "account", "region", "resources", "id", "time"),
  fc.constantFrom("detail", "$or", "parentRunId", "toolId", "__proto__", "constructor", ""),
  fc.string({ maxLength: 8 }),
);
const { pattern } = fc.letrec((tie) => ({
  pattern: fc.dictionary(fieldName, fc.oneof({ depthSize: "small" }, leaf, tie("nested")), {
    maxKeys: 5,
  }),
  nested: fc.oneof(
    { depthSize: "small" },
    fc.dictionary(fieldName, leaf, { maxKeys: 4 }),
    fc.array(tie("pattern"), { maxLength: 3 }),
  ),
}));

// Most patterns above are refused (empty objects, bare values, malformed operators...), so
// alone they may yield no valid pattern in a whole run: these are valid by construction.
const validFieldName = fc.oneof(
  fc.constantFrom("source", "detail-type", "resources", "parentRunId", "toolId", ""),
  fc.string({ maxLength: 8 }).filter((name) => name !== "$or" && name !== "__proto__"),
);
const validLeaf = fc.array(
  fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.record({ prefix: fc.string({ maxLength: 10 }) }),
    fc.record({ suffix: fc.record({ "equals-ignore-case": fc.string({ maxLength: 10 }) }) }),
    fc.record({ "equals-ignore-case": fc.string({ maxLength: 10 }) }),
    fc.record({ wildcard: fc.constantFrom("*", "tool*", "*.json", "a*b*c", "\\*literal") }),
    fc.record({ exists: fc.boolean() }),
    fc.record({ cidr: fc.constantFrom("10.0.0.0/8", "::/0", "2001:db8::/32") }),
    fc.record({
      numeric: fc.oneof(
        fc.tuple(fc.constantFrom("<", "<=", "=", ">", ">="), fc.integer()),
        fc
          .tuple(fc.integer(), fc.nat({ max: 1000 }))
          .map(([low, width]) => [">=", low, "<", low + width + 1]),
      ),
    }),
    fc.record({
      "anything-but": fc.oneof(
        fc.string({ maxLength: 10 }),
        fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
        fc.record({ prefix: fc.string({ minLength: 1, maxLength: 10 }) }),
      ),
    }),
  ),
  { minLength: 1, maxLength: 4 },
);
const validPattern = fc.dictionary(
  validFieldName,
  fc.oneof(validLeaf, fc.dictionary(validFieldName, validLeaf, { minKeys: 1, maxKeys: 3 })),
  { minKeys: 1, maxKeys: 4 },
);

const detail = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  fc.record({
    parentRunId: fc.string(),
    toolId: fc.string(),
    callId: fc.string(),
    input: fc.jsonValue({ maxDepth: 3 }),
    n: fc.double(),
  }),
);
const envelope = fc.record({
  version: fc.constant("0"),
  id: fc.uuid(),
  "detail-type": fc.oneof(fc.constantFrom("ToolCallScheduled", "ToolResultReceived"), fc.string()),
  source: fc.oneof(fc.constant("toolbus"), fc.string()),
  account: fc.stringMatching(/^\d{12}$/),
  time: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  region: fc.constantFrom("us-east-1", "eu-west-1"),
  resources: fc.array(fc.string(), { maxLength: 3 }),
  detail,
});

function compileOrReject(value: unknown) {
  try {
    return compilePattern(value);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEventPatternError);
    return undefined;
  }
}

describe("fuzz: the pattern matcher on full envelopes", () => {
  it("compiles or rejects structured patterns, and a compiled one never throws on any envelope", () => {
    let compiled = 0;
    fc.assert(
      fc.property(
        fc.oneof(pattern, validPattern),
        fc.array(envelope, { minLength: 1, maxLength: 5 }),
        (value, events) => {
          const matcher = compileOrReject(value);
          if (!matcher) return;
          compiled += 1;
          for (const event of events) expect(typeof matcher.matches(event)).toBe("boolean");
          // The same pattern as JSON text compiles to the same verdicts.
          const fromText = compilePattern(JSON.stringify(value));
          for (const event of events) expect(fromText.matches(event)).toBe(matcher.matches(event));
        },
      ),
      { numRuns: 300 },
    );
    expect(compiled).toBeGreaterThan(0);
  });

  it("matches an envelope against exact values taken from that envelope", () => {
    fc.assert(
      fc.property(envelope, (event) => {
        const keys = Object.keys(event.detail).filter((key) => {
          const value = (event.detail as Record<string, unknown>)[key];
          return (
            !key.startsWith("$") &&
            (typeof value === "string" || typeof value === "boolean" || value === null)
          );
        });
        const detailPattern = Object.fromEntries(
          keys.map((key) => [key, [(event.detail as Record<string, unknown>)[key]]]),
        );
        const exact = {
          source: [event.source],
          "detail-type": [event["detail-type"]],
          ...(keys.length > 0 ? { detail: detailPattern } : {}),
        };
        expect(compilePattern(exact).matches(event)).toBe(true);
        expect(compilePattern({ ...exact, source: [`${event.source}-not`] }).matches(event)).toBe(
          false,
        );
      }),
      { numRuns: 200 },
    );
  });

  it("survives hostile events: deep nesting, huge arrays, prototype keys, non-JSON values", () => {
    const matcher = compilePattern({
      source: ["toolbus"],
      detail: { a: { b: [{ exists: true }] }, n: [{ numeric: [">", 0] }] },
    });
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const hostile: unknown[] = [
      { source: "toolbus", detail: { a: deep } },
      { source: "toolbus", detail: { a: { b: new Array(100_000).fill("x") } } },
      JSON.parse('{"source":"toolbus","detail":{"__proto__":{"b":1},"constructor":{"b":2}}}'),
      { source: "toolbus", detail: { a: { b: Symbol("x") }, n: 10n } },
      { source: "toolbus", detail: new Map([["a", 1]]) },
      Object.create(null),
    ];
    for (const event of hostile) expect(typeof matcher.matches(event)).toBe("boolean");
  });
});

describe("fuzz: rules on the local bus through the AWS SDK", () => {
  let bus: LocalEventBus;
  let client: EventBridgeClient;

  beforeAll(async () => {
    bus = new LocalEventBus({ delivery: { baseDelayMs: 1, maxDelayMs: 5 } });
    client = localEventBridgeClient({ bus });
    await client.send(new CreateEventBusCommand({ Name: BUS }));
  });
  afterAll(async () => {
    await bus?.drain();
    bus?.close();
    client?.destroy();
  });

  /** The call succeeded, or failed with the named client error: never a server fault. */
  async function expectSuccessOr(name: string, call: Promise<unknown>) {
    try {
      await call;
      return true;
    } catch (error) {
      const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
      expect(failure.name, String(error)).toBe(name);
      if (name === "InvalidEventPatternException") {
        expect(error).toBeInstanceOf(InvalidEventPatternException);
      }
      expect(failure.$metadata?.httpStatusCode ?? 400).toBeLessThan(500);
      return false;
    }
  }

  const patternText = fc.oneof(
    pattern.map((value) => JSON.stringify(value)),
    validPattern.map((value) => JSON.stringify(value)),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
    fc.string({ maxLength: 100 }),
    fc.string({ unit: "binary", maxLength: 100 }),
  );

  /**
   * Each SDK call is an async round trip, so shrinking a large counterexample can take minutes:
   * a run that never answers fails on its own, and shrinking stops before vitest's timeout, so
   * fast-check reports the counterexample (and the seed and path to replay it) either way.
   */
  const bounded = {
    plugins: [fc.timeout(5_000), fc.interruptAfterTimeLimit(45_000, { failOnInterrupt: true })],
  };

  it("PutRule with any pattern succeeds or throws InvalidEventPatternException, never a 500", async () => {
    let n = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(patternText, async (text) => {
        // An empty pattern is an absent one: a ValidationException, as on AWS.
        fc.pre(text !== "");
        n += 1;
        // So is one over PutRule's documented length constraint, whatever the matcher makes of it.
        const tooLong = [...text].length > MAX_EVENT_PATTERN_LENGTH;
        const ok = await expectSuccessOr(
          tooLong ? "ValidationException" : "InvalidEventPatternException",
          client.send(
            // Shrinking adds runs: cycling through names replaces rules rather than reaching
            // the bus's 300-rule limit, where valid patterns would fail for an unrelated reason.
            new PutRuleCommand({ Name: `fuzz-${n % 100}`, EventBusName: BUS, EventPattern: text }),
          ),
        );
        if (tooLong) {
          expect(ok).toBe(false);
          return;
        }
        if (ok) accepted += 1;
        // The bus agrees with the matcher it uses.
        expect(ok).toBe(compileOrReject(text) !== undefined);
      }),
      { numRuns: 150, ...bounded },
    );
    expect(accepted).toBeGreaterThan(0);
  }, 60_000);

  it("refuses a PutRule pattern over 4096 characters with a ValidationException, though the matcher compiles it", async () => {
    // Found by the PutRule fuzz test: about one generated pattern in 300 is that long.
    const sized = (length: number) => {
      const text = JSON.stringify({ source: ["x".repeat(length - '{"source":[""]}'.length)] });
      expect(text.length).toBe(length);
      return text;
    };
    const put = (name: string, text: string) =>
      client.send(new PutRuleCommand({ Name: name, EventBusName: BUS, EventPattern: text }));

    const long = sized(MAX_EVENT_PATTERN_LENGTH + 1);
    expect(compileOrReject(long)).toBeDefined();
    const refused = await put("fuzz-long", long).then(
      () => undefined,
      (error: unknown) => error as { name?: string; message?: string },
    );
    expect(refused?.name).toBe("ValidationException");
    expect(refused?.message).toMatch(/EventPattern/);
    await expect(put("fuzz-long", sized(MAX_EVENT_PATTERN_LENGTH))).resolves.toHaveProperty(
      "RuleArn",
    );
  });

  it("TestEventPattern with any pattern and any event never answers with a server fault", async () => {
    await fc.assert(
      fc.asyncProperty(
        patternText,
        fc.oneof(
          envelope.map((event) => JSON.stringify(event)),
          fc.string({ maxLength: 100 }),
          fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
        ),
        async (text, event) => {
          try {
            const result = await client.send(
              new TestEventPatternCommand({ EventPattern: text, Event: event }),
            );
            expect(typeof result.Result).toBe("boolean");
          } catch (error) {
            const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
            expect(failure.$metadata?.httpStatusCode ?? 400, String(error)).toBeLessThan(500);
            expect(failure.name).not.toMatch(/Internal/);
          }
        },
      ),
      { numRuns: 150, ...bounded },
    );
  }, 60_000);

  it("PutEvents with arbitrary sources, detail types and details never faults", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            Source: fc.string({ maxLength: 40 }),
            DetailType: fc.string({ maxLength: 40 }),
            Detail: fc.oneof(
              detail.map((value) => JSON.stringify(value)),
              fc.string({ maxLength: 60 }),
            ),
          }),
          { minLength: 1, maxLength: 10 },
        ),
        async (entries) => {
          try {
            const result = await client.send(
              new PutEventsCommand({
                Entries: entries.map((entry) => ({ ...entry, EventBusName: BUS })),
              }),
            );
            expect(result.Entries?.length).toBe(entries.length);
          } catch (error) {
            const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
            expect(failure.$metadata?.httpStatusCode ?? 400, String(error)).toBeLessThan(500);
            expect(failure.name).not.toMatch(/Internal/);
          }
        },
      ),
      { numRuns: 100, ...bounded },
    );
  }, 60_000);
});
