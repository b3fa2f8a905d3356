import { builtinTools } from "@toolbus/tools";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSafeResponse, NASTY_SEGMENTS } from "./support/hostile";
import { type ApiRoute, documentedRoutes } from "./support/routes";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Hostile input against every HTTP route of the real composed system: whatever arrives, the
// answer is a 2xx or a JSON 4xx, never a 5xx, a stack trace or an internal name.

let system: TestToolbus;
let routes: ApiRoute[];

beforeAll(async () => {
  system = await startTestToolbus();
  routes = await documentedRoutes(system);
});
afterAll(() => system?.stop(), 60_000);

/** Path parameters filled with ids no test data uses, so fuzzing never touches real records. */
function concrete(path: string): string {
  return path
    .replace("{id}", "fuzz_tool_zz")
    .replace("{name}", "fuzz-set-zz")
    .replace("{runId}", "run-fuzz")
    .replace("{callId}", "call-fuzz")
    .replace("{keyId}", "key-fuzz");
}

const bodyRoutes = () =>
  [
    ...routes.filter((r) => r.method === "POST" || r.method === "PUT"),
    { method: "POST", path: "/mcp", hasBody: true },
  ].map((r) => ({ ...r, url: concrete(r.path) }));

const jsonBodies = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record({ tool: fc.string(), input: fc.jsonValue({ maxDepth: 3 }), wait: fc.jsonValue() }),
  fc.dictionary(
    fc.constantFrom("name", "role", "tool", "input", "id", "toolset", "harness", "agent", "mode"),
    fc.jsonValue({ maxDepth: 2 }),
  ),
);

const rawBodies = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.constantFrom("", "{", "[", "null", "{}}", '{"a":', "\u0000", "\uFEFF{}", "1e99999", "[[[[[["),
  fc.json({ maxDepth: 3 }).map((text) => `${text}garbage`),
);

async function send(method: string, url: string, body: string) {
  return system.request(url, {
    method,
    body,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  });
}

describe("fuzz: request bodies on every POST / PUT route", () => {
  it("finds the routes to fuzz in /openapi.json", () => {
    expect(bodyRoutes().length).toBeGreaterThanOrEqual(10);
  });

  it("answers arbitrary JSON values without a 5xx or a leak", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes()), jsonBodies, async (route, value) => {
        const body = JSON.stringify(value);
        const response = await send(route.method, route.url, body);
        await expectSafeResponse(response, { input: body, jsonRpc: route.path === "/mcp" });
      }),
      { numRuns: 80 },
    );
  }, 60_000);

  it("answers arbitrary strings sent as JSON without a 5xx or a leak", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodyRoutes()), rawBodies, async (route, body) => {
        const response = await send(route.method, route.url, body);
        const { status } = await expectSafeResponse(response, {
          input: body,
          jsonRpc: route.path === "/mcp",
        });
        // Not JSON at all is never accepted as if it were.
        if (route.hasBody && !isJson(body)) expect(status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: 80 },
    );
  }, 60_000);
});

/** JSON as the server reads it: RFC 8259 lets a parser ignore a leading byte order mark. */
function isJson(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\uFEFF/, ""));
    return true;
  } catch {
    return false;
  }
}

describe("fuzz: path segments", () => {
  const segment = fc.oneof(
    fc.string({ minLength: 1, maxLength: 80 }).map(encodeURIComponent),
    fc.string({ unit: "binary", minLength: 1, maxLength: 80 }).map(encodeURIComponent),
    fc.string({ minLength: 300, maxLength: 3000 }).map(encodeURIComponent),
    fc.constantFrom(...NASTY_SEGMENTS),
  );
  const templates = [
    { method: "GET", path: "/v1/tools/{x}" },
    { method: "GET", path: "/v1/toolsets/{x}" },
    { method: "GET", path: "/v1/runs/{x}/calls/call-1" },
    { method: "GET", path: "/v1/runs/run-1/calls/{x}" },
    { method: "GET", path: "/v1/runs/{x}/events" },
    { method: "POST", path: "/v1/tools/{x}/disable" },
    { method: "DELETE", path: "/v1/keys/{x}" },
    { method: "POST", path: "/v1/runs/{x}/calls" },
    { method: "PUT", path: "/v1/tools/{x}" },
  ];

  it("answers arbitrary run ids, call ids, tool ids and key ids with 2xx / 4xx only", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...templates), segment, async (template, value) => {
        const url = template.path.replace("{x}", value);
        const init =
          template.method === "GET" || template.method === "DELETE"
            ? { method: template.method }
            : {
                method: template.method,
                json: { tool: "readability_analyzer", input: { text: "Hi." }, wait: 0 },
              };
        const response = await system.request(url, init);
        const { status } = await expectSafeResponse(response, {
          input: decodeSafely(value) + value,
        });
        // A disable or a call under a fuzzed id must never quietly succeed on a real tool.
        if (template.path.startsWith("/v1/tools/{x}")) expect(status).toBeGreaterThanOrEqual(400);
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it("answers arbitrary query strings on the list routes", async () => {
    const query = fc.dictionary(
      fc.constantFrom("mode", "role", "toolset", "category", "limit", "cursor", "after", "x"),
      fc.string({ unit: "binary", maxLength: 100 }),
    );
    const lists = ["/v1/tools", "/v1/toolsets", "/v1/runs/run-q/events", "/v1/capabilities"];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...lists), query, async (path, params) => {
        const search = new URLSearchParams(params).toString();
        const response = await system.request(`${path}?${search}`);
        await expectSafeResponse(response, { input: JSON.stringify(params) });
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

describe("fuzz: every built-in tool's input", () => {
  const tools = builtinTools.map((tool) => ({
    id: tool.spec.id,
    schema: tool.input,
    examples: ((tool.spec as { examples?: { input?: unknown }[] }).examples ?? [])
      .map((example) => example.input)
      .filter((input): input is Record<string, unknown> => typeof input === "object" && !!input),
  }));

  /** An example input with one field replaced by anything: often valid, often not. */
  const mutated = fc.constantFrom(...tools).chain((tool) =>
    fc
      .tuple(
        fc.constantFrom<Record<string, unknown>>(...(tool.examples.length ? tool.examples : [{}])),
        fc.string({ maxLength: 12 }),
        fc.jsonValue({ maxDepth: 3 }),
        fc.boolean(),
      )
      .map(([example, key, value, replaceExisting]) => {
        const keys = Object.keys(example);
        const field =
          replaceExisting && keys.length > 0 ? (keys[key.length % keys.length] as string) : key;
        return { tool, input: { ...example, [field]: value } as unknown };
      }),
  );
  /** The tools' own examples, unchanged: valid, so the property sees accepted calls too. */
  const exact = fc
    .constantFrom(...tools.filter((tool) => tool.examples.length > 0))
    .chain((tool) =>
      fc.constantFrom(...tool.examples).map((input) => ({ tool, input: input as unknown })),
    );
  const anything = fc
    .constantFrom(...tools)
    .chain((tool) =>
      fc.jsonValue({ maxDepth: 4 }).map((input) => ({ tool, input: input as unknown })),
    );

  it("has input schemas whose safeParse never throws", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...tools),
        fc.anything({ maxDepth: 4, withNullPrototype: true, withMap: true, withBigInt: true }),
        (tool, input) => {
          const result = tool.schema.safeParse(input);
          expect(typeof result.success).toBe("boolean");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("accepts or rejects arbitrary inputs through POST /v1/runs/{runId}/calls, never a 5xx", async () => {
    const runId = system.runId();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(exact, mutated, anything), async ({ tool, input }) => {
        const response = await system.request(`/v1/runs/${runId}/calls`, {
          method: "POST",
          json: { tool: tool.id, input, wait: 0 },
        });
        const { status } = await expectSafeResponse(response, { input: JSON.stringify(input) });
        expect([200, 202, 400, 403, 404, 409, 422, 429]).toContain(status);
        // The API validates with the same schema the tool declares: no disagreement.
        const valid = tool.schema.safeParse(input).success;
        if (status === 200 || status === 202) {
          accepted += 1;
          expect(valid).toBe(true);
        }
      }),
      { numRuns: 100 },
    );
    expect(accepted).toBeGreaterThan(0);
  }, 90_000);
});

describe("fuzz: hostile JSON values", () => {
  /** Raw JSON text for numbers JSON allows and DynamoDB or 2^53 do not. */
  const wideNumbers = fc.oneof(
    fc.bigInt({ min: 2n ** 53n, max: 10n ** 60n }).map((n) => String(n)),
    fc.bigInt({ min: -(10n ** 60n), max: -(2n ** 53n) }).map((n) => String(n)),
    fc.integer({ min: 100, max: 400 }).map((exponent) => `1e${exponent}`),
    fc.integer({ min: 100, max: 400 }).map((exponent) => `-2.5e-${exponent}`),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  );
  /** Strings with NUL, lone surrogates and control characters, as JSON text. */
  const oddStrings = fc.oneof(
    fc.string({ unit: "binary", maxLength: 40 }).map((text) => JSON.stringify(text)),
    fc
      .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 4 })
      .map((units) => JSON.stringify(String.fromCharCode(...units))),
    fc.string({ maxLength: 20 }).map((text) => JSON.stringify(`${text}\u0000${text}`)),
  );
  /** Arrays and objects nested around the limit of 64 and well past it. */
  const nesting = fc.oneof(
    fc.integer({ min: 1, max: 200 }).map((depth) => `${"[".repeat(depth)}${"]".repeat(depth)}`),
    fc
      .integer({ min: 1, max: 200 })
      .map((depth) => `${'{"a":'.repeat(depth)}0${"}".repeat(depth)}`),
  );
  const hostileValue = fc.oneof(wideNumbers, oddStrings, nesting);
  const fields = fc.constantFrom("name", "role", "tool", "input", "mode", "id", "owner", "title");

  it("answers hostile values in any field of any body with a 2xx or a JSON 4xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...bodyRoutes()),
        fields,
        hostileValue,
        async (route, field, value) => {
          const body = `{"${field}":${value}}`;
          const response = await send(route.method, route.url, body);
          const { status } = await expectSafeResponse(response, {
            input: body,
            jsonRpc: route.path === "/mcp",
          });
          if (depthOf(body) > 64) expect(status).toBe(400);
        },
      ),
      { numRuns: 120 },
    );
  }, 90_000);

  it("takes hostile values as a tool's input and finishes every call it accepts", async () => {
    const runId = system.runId();
    await fc.assert(
      fc.asyncProperty(fc.oneof(wideNumbers, oddStrings), async (value) => {
        const body = `{"tool":"readability_analyzer","input":{"text":${value}},"wait":5}`;
        const response = await send("POST", `/v1/runs/${runId}/calls`, body);
        const { status, text } = await expectSafeResponse(response, { input: body });
        if (status === 200) {
          expect(["succeeded", "failed"]).toContain(
            (JSON.parse(text) as { status: string }).status,
          );
        }
      }),
      { numRuns: 60 },
    );
    await system.settle();
    const far = "9999-01-01T00:00:00.000Z";
    expect(await system.toolbus.stores.calls.listStuck(far)).toEqual([]);
    expect(await system.toolbus.stores.calls.listWaiting(far)).toEqual([]);
  }, 90_000);
});

/** Deepest nesting of arrays and objects in JSON text, outside strings. */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth -= 1;
  }
  return deepest;
}
