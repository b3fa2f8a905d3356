import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSafeResponse } from "./support/hostile";
import { type ApiRoute, documentedRoutes } from "./support/routes";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The hostile corpus (test/fixtures/hostile/api-*.json, plus what is generated here) replayed
// against every route of /openapi.json and against MCP: every answer is a 2xx or a JSON 4xx,
// a tool fails cleanly when its upstream answers something unusable, and no call is left
// pending or running.

interface Corpus {
  values: { name: string; json: string }[];
}
const corpus = JSON.parse(
  readFileSync(join(import.meta.dirname, "fixtures/hostile/api-values.json"), "utf8"),
) as Corpus;

const DEEP = 10_000;
const deepArray = `${"[".repeat(DEEP)}${"]".repeat(DEEP)}`;
const deepObject = `${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP)}`;
/** Every value the replay splices into bodies: the stored corpus and the generated ones. */
const VALUES = [
  ...corpus.values,
  { name: "10,000-deep arrays", json: deepArray },
  { name: "10,000-deep objects", json: deepObject },
];

let upstream: Upstream;
let system: TestToolbus;
let routes: ApiRoute[];

const anySchema = { type: "object", properties: { n: {} }, required: ["n"] };

beforeAll(async () => {
  upstream = await startUpstream((request, response) => {
    const send = (text: string) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(text);
    };
    const path = request.url.pathname;
    // The input as it arrived, numbers and escapes as written: the upstream's output.
    if (path === "/echo") return send(request.body);
    if (path === "/deep") return send(`{"n":${deepArray}}`);
    if (path === "/large") return send(JSON.stringify({ n: "y".repeat(1_000_000) }));
    if (path === "/numbers") return send('{"count": 123456789012345678901234567890, "x": 1e300}');
    response.writeHead(404).end();
  });
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const tool = (id: string, method: "GET" | "POST", path: string) => ({
    id,
    title: `Hostile ${id}`,
    description: "Answers whatever the test upstream answers.",
    category: "utility",
    usageHint: "Only in tests.",
    method,
    url: `${upstream.origin}${path}`,
    inputSchema: anySchema,
    outputSchema: {},
  });
  const registered = await system.request("/v1/registered-toolsets/hostile", {
    method: "PUT",
    json: {
      kind: "http",
      name: "hostile",
      description: "Upstreams with hostile answers",
      owner: "hostile-tests",
      tools: [
        tool("hostile_echo", "POST", "/echo"),
        tool("hostile_deep", "GET", "/deep"),
        tool("hostile_large", "GET", "/large"),
        tool("hostile_numbers", "GET", "/numbers"),
      ],
    },
  });
  expect(registered.status).toBe(201);
  routes = await documentedRoutes(system);
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await upstream?.close();
}, 60_000);

/** Path parameters of ids no other part of the test uses. */
const concrete = (path: string) =>
  path
    .replace("{id}", "hostile_probe")
    .replace("{name}", "hostile_probe")
    .replace("{runId}", "run-hostile-routes")
    .replace("{callId}", "call-hostile")
    .replace("{keyId}", "key-hostile");

/**
 * Bodies that are valid but for the spliced value ($V), so it reaches the code behind the
 * validation; every route also gets the value as its whole body and in an unknown field.
 */
const TEMPLATES: Record<string, string[]> = {
  "POST /v1/runs/{runId}/calls": [
    '{"tool":"hostile_echo","input":{"n":$V},"wait":10}',
    '{"tool":"hostile_echo","input":{"n":[$V,{"m":$V}]},"wait":0}',
  ],
  "POST /v1/keys": ['{"name":$V,"role":"viewer"}', '{"name":"k","role":$V}'],
  "PUT /v1/tools/{id}": [
    '{"id":"hostile_probe","toolset":"hostile_probe","title":$V,"description":"d","category":"utility","usageHint":"u","inputSchema":{"type":"object","properties":{"n":{"maximum":$V}}},"outputSchema":{}}',
  ],
  "PUT /v1/toolsets/{name}": ['{"name":"hostile_probe","description":"d","owner":$V}'],
  "PUT /v1/registered-toolsets/{name}": [
    '{"kind":"http","name":"hostile_probe","description":$V,"owner":"o","tools":[]}',
  ],
  "POST /v1/select": ['{"mode":$V}'],
  "POST /v1/prompt": ['{"mode":$V}'],
  "POST /v1/agents/render": [
    '{"harness":"claude-code","agent":{"name":"a","description":$V,"prompt":"p"}}',
  ],
};

function bodiesFor(route: string): ((value: string) => string)[] {
  const templates = TEMPLATES[route] ?? [];
  return [
    (value) => value,
    (value) => `{"hostile":${value}}`,
    ...templates.map((template) => (value: string) => template.replaceAll("$V", value)),
  ];
}

describe("the hostile corpus against every route", () => {
  it("has values and finds the routes in /openapi.json", () => {
    expect(corpus.values.length).toBeGreaterThanOrEqual(20);
    expect(routes.filter((route) => route.hasBody).length).toBeGreaterThanOrEqual(8);
  });

  it("answers every value in every body with a 2xx or a JSON 4xx, never a 5xx", async () => {
    const statuses = new Map<number, number>();
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const bodies = route.hasBody || route.method !== "GET" ? bodiesFor(name) : [];
      for (const value of VALUES) {
        for (const body of bodies) {
          const text = body(value.json);
          const response = await system.request(concrete(route.path), {
            method: route.method,
            body: text,
            headers: { "content-type": "application/json" },
          });
          const { status } = await expectSafeResponse(response, { input: text });
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }
    }
    // The replay reached handlers, not only the validators.
    expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
    expect([...statuses.keys()].some((status) => status === 400)).toBe(true);
  }, 120_000);

  it("answers every value in a query string and a path segment without a 5xx", async () => {
    for (const value of VALUES.slice(0, corpus.values.length)) {
      const text = encodeURIComponent(value.json);
      for (const url of [
        `/v1/tools?mode=${text}&category=${text}`,
        `/v1/runs/run-hostile-q/events?cursor=${text}&limit=${text}`,
        `/v1/tools/${text}`,
        `/v1/runs/${text}/calls/${text}`,
      ]) {
        await expectSafeResponse(await system.request(url), { input: value.json });
      }
    }
  });

  it("refuses 10,000-deep nesting with a 400 that says so", async () => {
    for (const json of [deepArray, deepObject]) {
      const response = await system.request("/v1/runs/run-hostile-deep/calls", {
        method: "POST",
        body: `{"tool":"hostile_echo","input":{"n":${json}}}`,
        headers: { "content-type": "application/json" },
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /nests .* more than 64 levels/,
      );
    }
  });

  it("refuses 10 MB strings with a 413 on the REST API and MCP", async () => {
    const huge = "z".repeat(10 * 1024 * 1024);
    const rest = await system.request("/v1/keys", {
      method: "POST",
      json: { name: huge, role: "viewer" },
    });
    expect(rest.status).toBe(413);
    const mcp = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: huge } },
    });
    await expectSafeResponse(mcp, { jsonRpc: true });
    expect(mcp.status).toBe(413);
  });
});

describe("hostile values in tool data", () => {
  type Call = {
    callId: string;
    status: string;
    result?: { data: unknown; truncated: boolean; failure?: { kind: string } };
  };
  const call = async (tool: string, inputJson: string, runId = system.runId()) => {
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      body: `{"tool":"${tool}","input":${inputJson},"wait":10}`,
      headers: { "content-type": "application/json" },
    });
    expect(response.status, `${inputJson}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Call;
  };

  it("takes a number beyond 2^53 in a registered tool's input and returns it as JSON.parse reads it", async () => {
    const done = await call("hostile_echo", '{"n":123456789012345678901234567890}');
    expect(done.status).toBe("succeeded");
    expect(done.result?.data).toEqual(JSON.parse('{"n":123456789012345678901234567890}'));
  });

  it("stores an upstream's numbers beyond DynamoDB's range, and the call finishes", async () => {
    const runId = system.runId();
    const done = await call("hostile_numbers", '{"n":1}', runId);
    expect(done.status).toBe("succeeded");
    const expected = JSON.parse('{"count": 123456789012345678901234567890, "x": 1e300}');
    expect(done.result?.data).toEqual(expected);
    const events = await system.events<{ detail: { data?: unknown } }>(runId);
    expect(events.map((event) => event.detail.data).filter(Boolean)).toEqual([expected]);
  });

  it("fails a call whose upstream answers 10,000 levels deep as invalid_output", async () => {
    const done = await call("hostile_deep", '{"n":1}');
    expect(done.status).toBe("failed");
    expect(done.result?.failure?.kind).toBe("invalid_output");
  });

  it("stores a 1 MB upstream answer shortened, and says so", async () => {
    const done = await call("hostile_large", '{"n":1}');
    expect(done.status).toBe("succeeded");
    expect(done.result?.truncated).toBe(true);
  });

  it("runs every corpus value through a registered tool and MCP, each call finished", async () => {
    const runId = system.runId();
    for (const value of corpus.values) {
      const done = await call("hostile_echo", `{"n":${value.json}}`, runId);
      expect(["succeeded", "failed"], value.name).toContain(done.status);
      // What JSON text can carry to the upstream and back (1e400 parses to Infinity: null).
      const carried = JSON.parse(JSON.stringify({ n: JSON.parse(value.json) }));
      expect(done.result?.data, value.name).toEqual(carried);
      const mcp = await system.request("/mcp", {
        method: "POST",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "x-toolbus-run-id": runId,
        },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hostile_echo","arguments":{"n":${value.json}}}}`,
      });
      const { text } = await expectSafeResponse(mcp, { jsonRpc: true, input: value.json });
      expect(mcp.status, value.name).toBe(200);
      expect(JSON.parse(text), value.name).toHaveProperty("result");
    }
  }, 60_000);

  it("leaves no call pending or running after the whole replay", async () => {
    await system.settle();
    const far = "9999-01-01T00:00:00.000Z";
    const calls = system.toolbus.stores.calls;
    expect(await calls.listStuck(far)).toEqual([]);
    expect(await calls.listWaiting(far)).toEqual([]);
  });
});

describe("names", () => {
  it.each([
    ["a NUL", "x\u0000y"],
    ["a lone surrogate", "x\ud800"],
    ["a line break", "x\ny"],
    ["HTML", "<b>admin</b>"],
    ["a right-to-left override", "\u202egnp.exe"],
  ])("refuses a key name with %s (400, the path named)", async (_what, name) => {
    const response = await system.request("/v1/keys", {
      method: "POST",
      json: { name, role: "viewer" },
    });
    const { status, text } = await expectSafeResponse(response);
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ error: { details: [{ path: "name" }] } });
  });

  it("refuses a registered toolset owner or tool title with control characters", async () => {
    const response = await system.request("/v1/registered-toolsets/hostile_names", {
      method: "PUT",
      json: {
        kind: "http",
        name: "hostile_names",
        description: "d",
        owner: "team\u0000x",
        tools: [
          {
            id: "hostile_names_tool",
            title: "bad\u0007title",
            description: "d",
            category: "utility",
            usageHint: "u",
            url: `${upstream.origin}/echo`,
            inputSchema: { type: "object" },
          },
        ],
      },
    });
    const { status, text } = await expectSafeResponse(response);
    expect(status).toBe(400);
    const paths = (JSON.parse(text) as { error: { details: { path: string }[] } }).error.details;
    expect(paths.map((detail) => detail.path).sort()).toEqual(["owner", "tools.0.title"]);
  });

  it("still takes names in any script, with emoji", async () => {
    const response = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "Équipe 東京 🚀", role: "viewer" },
    });
    expect(response.status).toBe(201);
  });
});
