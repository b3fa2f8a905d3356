import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// A stand-in for a team's own API: items by id, item creation, and every way an upstream fails.
let upstream: Upstream;
let system: TestToolbus;

const itemSchema = {
  type: "object",
  properties: { id: { type: "string" }, name: { type: "string" } },
  required: ["id", "name"],
};

function registration(overrides: Record<string, unknown> = {}) {
  return {
    kind: "http",
    name: "acme",
    description: "Acme's inventory API",
    owner: "team-acme",
    auth: { header: "X-Api-Key", secret: "TOOLSET_ACME_KEY" },
    tools: [
      {
        id: "acme_get_item",
        title: "Get an Acme item",
        description: "Reads one inventory item by id.",
        category: "reference",
        usageHint: "Look up an inventory item when the user names its id.",
        url: `${upstream.origin}/v1/items/{id}?fields={fields}`,
        inputSchema: {
          type: "object",
          properties: { id: { type: "string", minLength: 1 }, fields: { type: "string" } },
          required: ["id"],
          additionalProperties: false,
        },
        outputSchema: itemSchema,
        examples: [{ title: "Item 7", input: { id: "7" } }],
        cache: { ttlSeconds: 60 },
      },
      {
        id: "acme_create_item",
        title: "Create an Acme item",
        description: "Creates an inventory item.",
        category: "publish",
        usageHint: "Create an item when asked to.",
        method: "POST",
        url: `${upstream.origin}/v1/shelves/{shelf}/items`,
        inputSchema: {
          type: "object",
          properties: { shelf: { type: "string" }, name: { type: "string" } },
          required: ["shelf", "name"],
        },
        outputSchema: itemSchema,
        annotations: { readOnly: false, openWorld: true, idempotent: false },
      },
      {
        id: "acme_probe",
        title: "Probe an Acme endpoint",
        description: "Calls a diagnostic endpoint.",
        category: "utility",
        usageHint: "Only for diagnostics.",
        url: `${upstream.origin}/v1/probe/{mode}`,
        inputSchema: {
          type: "object",
          properties: { mode: { type: "string" } },
          required: ["mode"],
        },
        outputSchema: itemSchema,
        timeoutMs: 2_500,
      },
    ],
    ...overrides,
  };
}

beforeAll(async () => {
  upstream = await startUpstream(async (request, response) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify(body));
    };
    if (request.headers["x-api-key"] !== "s3cret") return json(401, { error: "bad key" });
    const path = request.url.pathname;
    const item = /^\/v1\/items\/([^/]+)$/.exec(path);
    if (item) return json(200, { id: decodeURIComponent(item[1] ?? ""), name: "Widget" });
    const shelf = /^\/v1\/shelves\/([^/]+)\/items$/.exec(path);
    if (shelf && request.method === "POST") {
      const body = JSON.parse(request.body) as { name: string };
      return json(201, { id: `${shelf[1]}-1`, name: body.name });
    }
    if (path === "/v1/probe/fail") return json(500, { error: "boom" });
    if (path === "/v1/probe/busy")
      return json(429, { error: "slow down" }, { "retry-after": "90" });
    if (path === "/v1/probe/shape") return json(200, { id: 7 });
    if (path === "/v1/probe/garbled") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{not json");
      return;
    }
    if (path === "/v1/probe/slow") {
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      return json(200, { id: "late", name: "late" });
    }
    return json(404, { error: "no such thing" });
  });
  const { hostname, port } = new URL(upstream.origin);
  system = await startTestToolbus({
    // The stage's network is this loopback upstream: a capability refresh probes it, with or
    // without internet on the machine running the tests.
    config: {
      outbound: { allowHosts: ["127.0.0.1"], networkProbe: { host: hostname, port: Number(port) } },
    },
    secrets: { TOOLSET_ACME_KEY: "s3cret" },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await upstream?.close();
});

type Call = {
  status: string;
  result: { data: unknown; output: string; cached: boolean; failure?: { kind: string } };
};

async function call(tool: string, input: unknown, runId = system.runId()) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool, input, wait: 10 },
  });
  return { response, body: (await response.json()) as Call & { error?: { message: string } } };
}

describe("an http toolset registered through the API", () => {
  it("is stored with its tools and reports them as added", async () => {
    const response = await system.request("/v1/registered-toolsets/acme", {
      method: "PUT",
      json: registration(),
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as {
      toolset: { kind: string };
      tools: {
        id: string;
        requires: string[];
        annotations: Record<string, boolean>;
        implementation: { kind: string };
      }[];
      diff: { added: string[] };
    };
    expect(body.toolset.kind).toBe("http");
    expect(body.diff.added).toEqual(["acme_create_item", "acme_get_item", "acme_probe"]);
    const get = body.tools.find((tool) => tool.id === "acme_get_item");
    expect(get?.requires).toEqual(["network", "secret_toolset_acme_key"]);
    // Not declared, so judged from the method: a GET reads, may be retried, reaches out.
    expect(get).toMatchObject({
      annotations: { readOnly: true, idempotent: true, openWorld: true },
    });
    // The secret is named, never stored.
    expect(JSON.stringify(body)).not.toContain("s3cret");
  });

  it("appears in the tool list, the selection, the prompt and the capability status", async () => {
    const list = (await (await system.request("/v1/tools?toolset=acme")).json()) as {
      tools: { id: string; available: boolean }[];
    };
    expect(list.tools.map((tool) => [tool.id, tool.available])).toEqual([
      ["acme_create_item", true],
      ["acme_get_item", true],
      ["acme_probe", true],
    ]);
    const prompt = await system.request("/v1/prompt", { method: "POST", json: {} });
    expect(await prompt.text()).toContain("acme_get_item");
    const capabilities = (await (await system.request("/v1/capabilities")).json()) as {
      capabilities: { name: string; available: boolean; source?: string }[];
    };
    expect(capabilities.capabilities).toContainEqual(
      expect.objectContaining({
        name: "secret_toolset_acme_key",
        available: true,
        source: "secret:TOOLSET_ACME_KEY",
      }),
    );
  });

  it("checks the referenced secret again on a capability refresh", async () => {
    const status = async () => {
      const listed = (await (await system.request("/v1/capabilities")).json()) as {
        capabilities: { name: string; available: boolean; checkedAt: string }[];
      };
      return listed.capabilities.find((entry) => entry.name === "secret_toolset_acme_key");
    };
    const before = await status();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const response = await system.request("/v1/capabilities/refresh", { method: "POST" });
    expect(response.status).toBe(200);
    const after = await status();
    expect(after?.available).toBe(true);
    expect(Date.parse(after?.checkedAt ?? "")).toBeGreaterThan(Date.parse(before?.checkedAt ?? ""));
  });

  it("runs a GET tool from its URL template, with the secret header, and logs both events", async () => {
    const runId = system.runId();
    const { response, body } = await call("acme_get_item", { id: "a b/7" }, runId);
    expect(response.status).toBe(200);
    expect(body).toMatchObject({
      status: "succeeded",
      result: { data: { id: "a b/7", name: "Widget" } },
    });
    const request = upstream.requests.at(-1);
    // The value stays one path segment: its slash is encoded.
    expect(request?.url.pathname).toBe("/v1/items/a%20b%2F7");
    expect(request?.url.searchParams.has("fields")).toBe(false);
    const events = await system.events(runId);
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
    expect(events[0]?.detail).toMatchObject({
      toolId: "acme_get_item",
      toolset: "acme",
      implementation: "http",
    });
    expect(events[1]?.detail).toMatchObject({ status: "succeeded", toolset: "acme" });
  });

  it("serves a repeated call from the cache without asking the upstream again", async () => {
    await call("acme_get_item", { id: "cached" });
    const before = upstream.requests.length;
    const { body } = await call("acme_get_item", { id: "cached" });
    expect(body).toMatchObject({
      status: "succeeded",
      result: { cached: true, data: { id: "cached" } },
    });
    expect(upstream.requests.length).toBe(before);
  });

  it("sends the fields the template leaves over as the JSON body of a POST", async () => {
    const { body } = await call("acme_create_item", { shelf: "s9", name: "Gear" });
    expect(body).toMatchObject({
      status: "succeeded",
      result: { data: { id: "s9-1", name: "Gear" } },
    });
    const request = upstream.requests.at(-1);
    expect(request?.method).toBe("POST");
    expect(JSON.parse(request?.body ?? "")).toEqual({ name: "Gear" });
  });

  it("refuses input that breaks the JSON Schema with 400 naming each path, scheduling nothing", async () => {
    const runId = system.runId();
    const { response, body } = await call("acme_get_item", { id: "", colour: "red" }, runId);
    expect(response.status).toBe(400);
    const details = (body as unknown as { error: { details: { path: string; message: string }[] } })
      .error.details;
    expect(details).toEqual(
      expect.arrayContaining([
        { path: "colour", message: "unknown field" },
        expect.objectContaining({ path: "id" }),
      ]),
    );
    expect(await system.events(runId)).toEqual([]);
  });

  it("refuses a path value that would walk up the upstream's path", async () => {
    const { response } = await call("acme_get_item", { id: ".." });
    expect(response.status).toBe(400);
  });

  it.each([
    ["fail", "upstream_error"],
    ["busy", "rate_limited"],
    ["shape", "invalid_output"],
    ["garbled", "invalid_output"],
    ["slow", "timeout"],
    ["missing", "upstream_error"],
  ])("maps an upstream answering %s to the failure kind %s", async (mode, kind) => {
    const { response, body } = await call("acme_probe", { mode });
    expect(response.status).toBe(200);
    expect(body.status).toBe("failed");
    expect(body.result.failure?.kind).toBe(kind);
  });
});

describe("a bad http registration", () => {
  async function refused(body: unknown, status = 400) {
    const before = (await (await system.request("/v1/tools")).json()) as { tools: unknown[] };
    const response = await system.request(
      `/v1/registered-toolsets/${(body as { name: string }).name}`,
      { method: "PUT", json: body },
    );
    const error = (await response.json()) as { error: { message: string; details?: unknown } };
    expect(response.status).toBe(status);
    const after = (await (await system.request("/v1/tools")).json()) as { tools: unknown[] };
    expect(after.tools).toEqual(before.tools);
    return `${error.error.message} ${JSON.stringify(error.error.details ?? "")}`;
  }

  const one = (tool: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const base = registration({ name: "acme_bad", ...extra });
    const [first] = base.tools as Record<string, unknown>[];
    return { ...base, tools: [{ ...first, id: "acme_bad_get", ...tool }] };
  };

  it("is refused for an input schema that is not JSON Schema", async () => {
    const message = await refused(
      one({ inputSchema: { type: "object", properties: { id: { type: "strung" } } } }),
    );
    expect(message).toMatch(/tools\.0\.inputSchema.*not a valid JSON Schema/);
  });

  it("is refused for a role or mode the stage does not have, naming the path", async () => {
    const message = await refused(one({ availability: { minRole: "god", modes: ["nope"] } }));
    expect(message).toContain("tools.0.availability.minRole");
    expect(message).toContain("tools.0.availability.modes.0");
  });

  it("is refused for a schema whose reference cannot be resolved", async () => {
    const message = await refused(one({ outputSchema: { $ref: "#/$defs/missing" } }));
    expect(message).toMatch(/cannot be compiled/);
  });

  it("is refused for a URL placeholder the input schema does not declare", async () => {
    const message = await refused(one({ url: `${upstream.origin}/v1/items/{sku}` }));
    expect(message).toMatch(/\{sku\}/);
  });

  it("is refused for an id another toolset owns, naming both owners", async () => {
    const message = await refused(one({ id: "readability_analyzer" }));
    expect(message).toMatch(
      /readability_analyzer is already registered by toolset \w+ \(owner [^)]+\)/,
    );
    expect(message).toMatch(/toolset acme_bad \(owner team-acme\)/);
  });

  it("is refused for a URL that resolves to a private address", async () => {
    const message = await refused(one({ url: "http://10.1.2.3/v1/items/{id}" }));
    expect(message).toMatch(/10\.1\.2\.3.*may not reach.*allowHosts/);
  });

  it("is refused for the cloud metadata address", async () => {
    const message = await refused(one({ url: "http://169.254.169.254/latest/{id}" }));
    expect(message).toMatch(/may not reach/);
  });

  it("is refused for a host that does not resolve", async () => {
    const message = await refused(one({ url: "https://no-such-host.invalid/v1/{id}" }));
    expect(message).toMatch(/could not be resolved/);
  });

  it("is refused when a referenced secret is not set", async () => {
    const message = await refused(
      one({}, { auth: { header: "X-Api-Key", secret: "TOOLSET_ACME_MISSING" } }),
    );
    expect(message).toMatch(/TOOLSET_ACME_MISSING is not set on this stage/);
  });

  it.each(["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "TOOLBUS_ADMIN_KEY", "SST_SECRET"])(
    "is refused for the platform's own secret %s (Lambda credentials, the admin key)",
    async (secret) => {
      const message = await refused(one({}, { auth: { header: "X-Api-Key", secret } }));
      expect(message).toMatch(/platform's own/);
    },
  );

  it("is refused when the toolset name belongs to another owner", async () => {
    const message = await refused({ ...registration(), owner: "someone-else" }, 409);
    expect(message).toMatch(/already registered by owner team-acme/);
  });

  it("is refused for a built-in toolset's name", async () => {
    const toolsets = (await (await system.request("/v1/toolsets")).json()) as {
      toolsets: { name: string; kind: string }[];
    };
    const builtin = toolsets.toolsets.find((toolset) => toolset.kind === "builtin")?.name;
    const message = await refused(one({}, { name: builtin }), 409);
    expect(message).toMatch(/built in/);
  });
});

describe("removing an http toolset", () => {
  it("takes its tools out of the catalog, and calls to them are 404", async () => {
    const response = await system.request("/v1/registered-toolsets/acme", { method: "DELETE" });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { removed: string[] }).removed).toEqual([
      "acme_create_item",
      "acme_get_item",
      "acme_probe",
    ]);
    const list = (await (await system.request("/v1/tools")).json()) as { tools: { id: string }[] };
    expect(list.tools.map((tool) => tool.id)).not.toContain("acme_get_item");
    expect((await system.request("/v1/toolsets/acme")).status).toBe(404);
    expect((await call("acme_get_item", { id: "1" })).response.status).toBe(404);
  });

  it("fails a call scheduled before the removal as unavailable when it is delivered", async () => {
    const runId = system.runId();
    const { calls } = system.toolbus.stores;
    const call = {
      parentRunId: runId,
      callId: "late-1",
      toolId: "acme_get_item",
      toolset: "acme",
      toolVersion: "1",
      implementation: "http" as const,
      input: { id: "1" },
      inputHash: "h",
      status: "pending" as const,
      requestedBy: { id: "admin", role: "admin" },
      scheduledAt: new Date().toISOString(),
    };
    await calls.create(call);
    const { implementation, ...detail } = call;
    await system.toolbus.handlers["registered/http"]?.({
      "detail-type": "ToolCallScheduled",
      detail: { ...detail, implementation, eventKey: `${runId}/late-1/scheduled` },
    });
    const stored = await calls.get(runId, "late-1");
    expect(stored).toMatchObject({
      status: "failed",
      result: { failure: { kind: "unavailable", recovery: "replan" } },
    });
  });

  it("refuses to remove a built-in toolset", async () => {
    const toolsets = (await (await system.request("/v1/toolsets")).json()) as {
      toolsets: { name: string; kind: string }[];
    };
    const builtin = toolsets.toolsets.find((toolset) => toolset.kind === "builtin")?.name;
    const response = await system.request(`/v1/registered-toolsets/${builtin}`, {
      method: "DELETE",
    });
    expect(response.status).toBe(409);
  });
});

describe("the former path, /v1/external-toolsets", () => {
  it("registers, refreshes and removes as the current path does, and is left out of the API document", async () => {
    const body = { ...registration(), name: "legacy" };
    const put = await system.request("/v1/external-toolsets/legacy", { method: "PUT", json: body });
    expect(put.status).toBe(201);
    const shown = await system.request("/v1/toolsets/legacy");
    expect(shown.status).toBe(200);
    // The current path sees the same toolset: replacing it there answers 200, not 201.
    const again = await system.request("/v1/registered-toolsets/legacy", {
      method: "PUT",
      json: body,
    });
    expect(again.status).toBe(200);
    const removed = await system.request("/v1/external-toolsets/legacy", { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect((await system.request("/v1/toolsets/legacy")).status).toBe(404);

    const document = (await (await system.request("/openapi.json", { key: null })).json()) as {
      paths: Record<string, unknown>;
    };
    const paths = Object.keys(document.paths);
    expect(paths).toContain("/v1/registered-toolsets/{name}");
    expect(paths.filter((path) => path.includes("external"))).toEqual([]);
  });
});
