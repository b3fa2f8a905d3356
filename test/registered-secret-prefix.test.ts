import { REGISTERED_SECRET_PREFIX } from "@toolbus/core";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { type ToolSpec, type ToolsetSpec, toolSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Registered toolsets may name only secrets under TOOLSET_: on AWS the functions that run
// their tools can read no other secret of the stage. A registration naming another secret is
// refused; one stored before the rule still loads, but is unavailable until registered again.

const RULE = /registered toolsets may only name secrets starting with TOOLSET_/;

let upstream: Upstream;
let mcp: McpUpstream;
let system: TestToolbus;

// Every secret name the system asks for, so a test can tell a secret was never read.
const reads: string[] = [];
const values: Record<string, string> = {
  TOOLSET_ACME_KEY: "s3cret",
  // What a registration stored before the rule names: set, and still never read.
  ACME_KEY: "old-s3cret",
  WEATHER_TOKEN: "w-token",
};
const secrets = new Proxy(values, {
  get(target, name) {
    if (typeof name === "string") reads.push(name);
    return Reflect.get(target, name);
  },
});

const inputSchema = {
  type: "object",
  properties: { id: { type: "string", minLength: 1 } },
  required: ["id"],
};

function registration(secret: string, overrides: Record<string, unknown> = {}) {
  return {
    kind: "http",
    name: "legacy",
    description: "Acme's inventory API, registered before the secret rule",
    owner: "team-legacy",
    auth: { header: "X-Api-Key", secret },
    tools: [
      {
        id: "legacy_get_item",
        title: "Get a legacy item",
        description: "Reads one inventory item by id.",
        category: "reference",
        usageHint: "Look up an inventory item when the user names its id.",
        url: `${upstream.origin}/v1/items/{id}`,
        inputSchema,
      },
    ],
    ...overrides,
  };
}

/** A registered tool as the catalog stores it, written before the rule existed. */
function storedTool(
  id: string,
  toolset: string,
  secret: string,
  implementation: ToolSpec["implementation"],
): ToolSpec {
  return toolSpec.parse({
    id,
    toolset,
    title: id,
    description: `${id}, registered before the secret rule.`,
    category: "reference",
    usageHint: `Use ${id} when asked.`,
    requires: ["network", `secret_${secret.toLowerCase()}`],
    inputSchema,
    outputSchema: {},
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    version: "1",
    implementation,
  });
}

async function put(body: { name: string } & Record<string, unknown>) {
  const response = await system.request(`/v1/registered-toolsets/${body.name}`, {
    method: "PUT",
    json: body,
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { message: string; details?: unknown } },
  };
}

async function toolsOf(toolset: string) {
  const response = await system.request(`/v1/tools?toolset=${toolset}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { tools: (ToolSpec & ListedAvailability)[] }).tools;
}
type ListedAvailability = { available: boolean; reasons?: string[] };

async function call(tool: string, input: unknown) {
  const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
    method: "POST",
    json: { tool, input, wait: 10 },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    result: { data: unknown; failure?: { kind: string; message: string } };
  };
}

beforeAll(async () => {
  upstream = await startUpstream((request, response) => {
    const ok = request.headers["x-api-key"] === "s3cret";
    response.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
    response.end(JSON.stringify(ok ? { id: "7", name: "Widget" } : { error: "bad key" }));
  });
  mcp = await startMcpUpstream([textTool("alerts", "Active weather alerts.", "none")]);
  const { hostname, port } = new URL(upstream.origin);
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"], networkProbe: { host: hostname, port: Number(port) } },
    },
    secrets,
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await mcp?.close();
  await upstream?.close();
});

describe("a registration naming a secret outside TOOLSET_", () => {
  it("has the prefix the stack grants", () => {
    expect(REGISTERED_SECRET_PREFIX).toBe("TOOLSET_");
  });

  it("is refused with the rule in the message, writing nothing and reading no secret", async () => {
    const before = await toolsOf("ghost");
    reads.length = 0;
    const { status, body } = await put(registration("GITHUB_TOKEN", { name: "ghost" }));
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(RULE);
    expect(body.error?.message).toContain("auth.secret names GITHUB_TOKEN");
    expect(body.error?.message).toContain("(TOOLSET_GITHUB_TOKEN)");
    expect(body.error?.message).toMatch(/belong to Toolbus and its built-in tools/);
    expect(reads).not.toContain("GITHUB_TOKEN");
    expect((await system.request("/v1/toolsets/ghost")).status).toBe(404);
    expect(await toolsOf("ghost")).toEqual(before);
  });

  it("is refused when one tool names it, at that tool's path", async () => {
    const base = registration("TOOLSET_ACME_KEY", { name: "ghost" });
    const [tool] = base.tools;
    const { status, body } = await put({
      ...base,
      tools: [{ ...tool, auth: { header: "X-Api-Key", secret: "SEARCH_API_KEY" } }],
    });
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(RULE);
    expect(JSON.stringify(body.error?.details)).toContain("tools.0.auth.secret");
    expect((await system.request("/v1/toolsets/ghost")).status).toBe(404);
  });

  it("is refused for an MCP server before the server is asked", async () => {
    const asked = mcp.headers.length;
    const { status, body } = await put({
      kind: "mcp",
      name: "ghost_mcp",
      description: "An MCP server naming the admin's secrets",
      owner: "team-ghost",
      url: mcp.url,
      auth: { header: "Authorization", secret: "WEATHER_TOKEN", prefix: "Bearer " },
    });
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(RULE);
    expect(mcp.headers.length).toBe(asked);
    expect((await system.request("/v1/toolsets/ghost_mcp")).status).toBe(404);
  });
});

describe("an http registration stored before the rule", () => {
  beforeAll(async () => {
    // Written straight into the store, as it was stored before the rule: no API, no checks.
    const toolset: ToolsetSpec = {
      name: "legacy",
      description: "Acme's inventory API, registered before the secret rule",
      owner: "team-legacy",
      kind: "http",
    };
    await system.toolbus.stores.catalog.replaceToolset(toolset, [
      storedTool("legacy_get_item", "legacy", "ACME_KEY", {
        kind: "http",
        method: "GET",
        url: `${upstream.origin}/v1/items/{id}`,
        auth: { header: "X-Api-Key", secret: "ACME_KEY", prefix: "" },
      }),
    ]);
  });

  it("lists without error and is unavailable for its secret's capability", async () => {
    expect((await system.request("/v1/toolsets/legacy")).status).toBe(200);
    expect((await system.request("/v1/tools/legacy_get_item")).status).toBe(200);
    const [tool] = await toolsOf("legacy");
    expect(tool).toMatchObject({
      id: "legacy_get_item",
      available: false,
      reasons: ["capability:secret_acme_key"],
    });
  });

  it("states the rule and the fix as that capability's reason, without reading the secret", async () => {
    reads.length = 0;
    const response = await system.request("/v1/capabilities/refresh", { method: "POST" });
    expect(response.status).toBe(200);
    const listed = (await (await system.request("/v1/capabilities")).json()) as {
      capabilities: { name: string; available: boolean; reason?: string }[];
    };
    const status = listed.capabilities.find((entry) => entry.name === "secret_acme_key");
    expect(status?.available).toBe(false);
    expect(status?.reason).toMatch(RULE);
    expect(status?.reason).toMatch(/ACME_KEY is not read.*register the toolset again/);
    expect(reads).not.toContain("ACME_KEY");
  });

  it("fails its calls as unavailable without reading the secret or reaching the upstream", async () => {
    reads.length = 0;
    const asked = upstream.requests.length;
    const body = await call("legacy_get_item", { id: "7" });
    expect(body.status).toBe("failed");
    expect(body.result.failure?.kind).toBe("unavailable");
    expect(body.result.failure?.message).toMatch(RULE);
    expect(reads).not.toContain("ACME_KEY");
    expect(upstream.requests.length).toBe(asked);
  });

  it("is refused its next write while it names the old secret, and stays as stored", async () => {
    const { status, body } = await put(registration("ACME_KEY"));
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(RULE);
    const stored = (await (await system.request("/v1/tools/legacy_get_item")).json()) as ToolSpec;
    expect(stored.implementation).toMatchObject({ auth: { secret: "ACME_KEY" } });
  });

  it("is available again once registered with a TOOLSET_ name, and its calls succeed", async () => {
    const { status } = await put(registration("TOOLSET_ACME_KEY"));
    expect(status).toBe(200);
    const [tool] = await toolsOf("legacy");
    expect(tool).toMatchObject({ id: "legacy_get_item", available: true });
    const body = await call("legacy_get_item", { id: "7" });
    expect(body).toMatchObject({ status: "succeeded", result: { data: { id: "7" } } });
    expect(upstream.requests.at(-1)?.headers["x-api-key"]).toBe("s3cret");
    expect(reads).not.toContain("ACME_KEY");
  });
});

describe("an MCP registration stored before the rule", () => {
  it("is refused a refresh with the rule, without asking the server", async () => {
    const auth = { header: "Authorization", secret: "WEATHER_TOKEN", prefix: "Bearer " };
    await system.toolbus.stores.catalog.replaceToolset(
      {
        name: "legacy_weather",
        description: "The weather team's MCP server, registered before the secret rule",
        owner: "team-weather",
        kind: "mcp",
        source: { url: mcp.url, auth, renames: {}, defaults: { category: "research" } },
      },
      [
        storedTool("legacy_alerts", "legacy_weather", "WEATHER_TOKEN", {
          kind: "mcp",
          url: mcp.url,
          auth,
          remoteName: "alerts",
        }),
      ],
    );
    expect((await toolsOf("legacy_weather"))[0]).toMatchObject({ available: false });
    const asked = mcp.headers.length;
    const response = await system.request("/v1/registered-toolsets/legacy_weather/refresh", {
      method: "POST",
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toMatch(RULE);
    expect(mcp.headers.length).toBe(asked);
    const body = await call("legacy_alerts", { id: "x" });
    expect(body.result.failure?.kind).toBe("unavailable");
    expect(mcp.calls).toEqual([]);
  });
});
