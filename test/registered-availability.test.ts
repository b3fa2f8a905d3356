import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * Offered on purpose, one tool at a time: a new registration that does not say who may use
 * its tools offers them to admins only; an administrator widens one tool with
 * PUT /v1/tools/{id}/availability, and that choice survives refreshes and re-registrations
 * that state nothing. A registration that states availability gets what it states.
 */

const envTool = textTool("get_env", "Returns the server's environment.", "HOME=/root");
const echoTool = textTool("echo", "Echoes the message.", (args) => String(args.message), {
  message: { type: "string" },
});
const addTool = textTool("add", "Adds two numbers.", "3");

let server: McpUpstream;
let open: McpUpstream;
let system: TestToolbus;
let memberKey: string;
let viewerKey: string;

function registration(name: string, url: string, defaults: Record<string, unknown> = {}) {
  return {
    kind: "mcp",
    name,
    description: `The ${name} MCP server`,
    owner: `team-${name}`,
    url,
    renames: { get_env: `${name}_get_env`, echo: `${name}_echo`, add: `${name}_add` },
    defaults: { timeoutMs: 5_000, ...defaults },
  };
}

async function register(body: { name: string }) {
  return system.request(`/v1/registered-toolsets/${body.name}`, { method: "PUT", json: body });
}

async function createKey(name: string, role: string): Promise<string> {
  const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

/** Tool ids GET /v1/tools says are available to this key. */
async function available(key: string): Promise<string[]> {
  const response = await system.request("/v1/tools", { key });
  expect(response.status).toBe(200);
  const { tools } = (await response.json()) as { tools: { id: string; available: boolean }[] };
  return tools.filter((tool) => tool.available).map((tool) => tool.id);
}

/** Tool names /mcp tools/list offers this key. */
async function mcpListed(key: string): Promise<string[]> {
  const response = await system.request("/mcp", {
    method: "POST",
    key,
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result: { tools: { name: string }[] } };
  return body.result.tools.map((tool) => tool.name);
}

async function tool(id: string) {
  const response = await system.request(`/v1/tools/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    id: string;
    revision: number;
    availability: { enabled: boolean; modes?: string[]; minRole?: string };
  };
}

async function setAvailability(
  id: string,
  body: unknown,
  init: { key?: string; ifMatch?: string } = {},
): Promise<Response> {
  return system.request(`/v1/tools/${id}/availability`, {
    method: "PUT",
    ...(init.key ? { key: init.key } : {}),
    ...(init.ifMatch ? { headers: { "if-match": init.ifMatch } } : {}),
    json: body,
  });
}

beforeAll(async () => {
  server = await startMcpUpstream([envTool, echoTool]);
  open = await startMcpUpstream([addTool]);
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      modes: { default: "default", available: ["default", "review"] },
    },
  });
  memberKey = await createKey("availability-member", "member");
  viewerKey = await createKey("availability-viewer", "viewer");
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await server?.close();
  await open?.close();
});

describe("a new registration that does not say who may use its tools", () => {
  it("offers them to admins only: GET /v1/tools and /mcp tools/list, as each key", async () => {
    const response = await register(registration("ops", server.url));
    expect(response.status).toBe(201);
    const body = (await response.json()) as {
      tools: { id: string; availability: { minRole?: string } }[];
    };
    for (const stored of body.tools) {
      expect(stored.availability).toEqual({ enabled: true, minRole: "admin" });
    }

    expect(await available(system.adminKey)).toEqual(
      expect.arrayContaining(["ops_get_env", "ops_echo"]),
    );
    expect(await mcpListed(system.adminKey)).toEqual(
      expect.arrayContaining(["ops_get_env", "ops_echo"]),
    );
    const member = await available(memberKey);
    expect(member).not.toContain("ops_get_env");
    expect(member).not.toContain("ops_echo");
    const memberMcp = await mcpListed(memberKey);
    expect(memberMcp).not.toContain("ops_get_env");
    expect(memberMcp).not.toContain("ops_echo");
    // Built-in tools are as they were: the default is for registrations only.
    expect(member).toContain("readability_analyzer");

    const listed = await system.request("/v1/tools?toolset=ops", { key: memberKey });
    const { tools } = (await listed.json()) as {
      tools: { id: string; available: boolean; reasons?: string[] }[];
    };
    expect(tools.find((t) => t.id === "ops_echo")).toMatchObject({
      available: false,
      reasons: ["role"],
    });
  });

  it("widens one tool with PUT /v1/tools/{id}/availability, and only that tool", async () => {
    const before = await tool("ops_echo");
    const response = await setAvailability(
      "ops_echo",
      { minRole: "member" },
      { ifMatch: `"${before.revision}"` },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("etag")).toBe(`"${before.revision + 1}"`);
    expect(await response.json()).toMatchObject({
      id: "ops_echo",
      availability: { enabled: true, minRole: "member" },
      revision: before.revision + 1,
    });

    const member = await available(memberKey);
    expect(member).toContain("ops_echo");
    expect(member).not.toContain("ops_get_env");
    const memberMcp = await mcpListed(memberKey);
    expect(memberMcp).toContain("ops_echo");
    expect(memberMcp).not.toContain("ops_get_env");
    expect(await available(viewerKey)).not.toContain("ops_echo");

    // The write is audited like every admin catalog write.
    const audit = await system.request("/v1/audit?limit=1");
    const [entry] = ((await audit.json()) as { entries: Record<string, unknown>[] }).entries;
    expect(entry).toMatchObject({
      action: "PUT",
      target: "/v1/tools/ops_echo/availability",
      object: { kind: "tool", id: "ops_echo", toolset: "ops" },
      status: 200,
      before: `"${before.revision}"`,
      after: `"${before.revision + 1}"`,
    });
  });

  it("keeps the widened tool widened after a refresh, and a new tool admins-only once accepted", async () => {
    server.setTools([envTool, echoTool, addTool]);
    const response = await system.request("/v1/registered-toolsets/ops/refresh", {
      method: "POST",
      json: {},
    });
    expect(response.status).toBe(200);
    const { held } = (await response.json()) as { held: { added: string[] } };
    expect(held.added).toEqual(["ops_add"]);
    const accepted = await system.request("/v1/registered-toolsets/ops/review/accept", {
      method: "POST",
    });
    expect(accepted.status).toBe(200);
    expect((await tool("ops_echo")).availability).toEqual({ enabled: true, minRole: "member" });
    expect((await tool("ops_get_env")).availability).toEqual({ enabled: true, minRole: "admin" });
    expect((await tool("ops_add")).availability).toEqual({ enabled: true, minRole: "admin" });
    const member = await available(memberKey);
    expect(member).toContain("ops_echo");
    expect(member).not.toContain("ops_add");
    expect(await mcpListed(memberKey)).toContain("ops_echo");
  });

  it("keeps every tool's availability when registered again without a statement", async () => {
    await setAvailability("ops_get_env", { enabled: false, minRole: "admin" });
    const response = await register(registration("ops", server.url));
    expect(response.status).toBe(200);
    expect((await tool("ops_echo")).availability).toEqual({ enabled: true, minRole: "member" });
    expect((await tool("ops_get_env")).availability).toEqual({ enabled: false, minRole: "admin" });
    expect((await tool("ops_add")).availability).toEqual({ enabled: true, minRole: "admin" });
  });

  it("applies what a registration states, for every tool", async () => {
    const response = await register(
      registration("ops", server.url, { availability: { minRole: "viewer" } }),
    );
    expect(response.status).toBe(200);
    expect((await tool("ops_echo")).availability).toEqual({ enabled: true, minRole: "viewer" });
    expect((await tool("ops_add")).availability).toEqual({ enabled: true, minRole: "viewer" });
    // An administrator's disable still survives, as it always has.
    expect((await tool("ops_get_env")).availability).toEqual({
      enabled: false,
      minRole: "viewer",
    });
    // The stored registration states viewer; an administrator's narrowing survives a refresh.
    await setAvailability("ops_add", { minRole: "admin" });
    const refreshed = await system.request("/v1/registered-toolsets/ops/refresh", {
      method: "POST",
      json: {},
    });
    expect(refreshed.status).toBe(200);
    expect((await tool("ops_add")).availability).toEqual({ enabled: true, minRole: "admin" });
    expect((await tool("ops_echo")).availability).toEqual({ enabled: true, minRole: "viewer" });
  });
});

describe("a registration that states who may use its tools", () => {
  it("with defaults.availability {} offers them to members at once", async () => {
    const response = await register(registration("open", open.url, { availability: {} }));
    expect(response.status).toBe(201);
    expect((await tool("open_add")).availability).toEqual({ enabled: true });
    expect(await available(memberKey)).toContain("open_add");
    expect(await mcpListed(memberKey)).toContain("open_add");
  });

  it("states it per tool in an http registration; a tool that states nothing is admins-only", async () => {
    const response = await register({
      kind: "http",
      name: "httpish",
      description: "An http toolset",
      owner: "team-http",
      tools: [
        {
          id: "httpish_open",
          title: "Open",
          description: "Open to members.",
          category: "utility",
          usageHint: "Use it.",
          url: new URL("/open", server.url).href,
          inputSchema: { type: "object" },
          availability: {},
        },
        {
          id: "httpish_closed",
          title: "Closed",
          description: "Admins only until widened.",
          category: "utility",
          usageHint: "Use it.",
          url: new URL("/closed", server.url).href,
          inputSchema: { type: "object" },
        },
      ],
    } as never);
    expect(response.status, await response.clone().text()).toBe(201);
    expect((await tool("httpish_open")).availability).toEqual({ enabled: true });
    expect((await tool("httpish_closed")).availability).toEqual({
      enabled: true,
      minRole: "admin",
    });
  });
});

describe("PUT /v1/tools/{id}/availability", () => {
  it("works for a built-in tool too", async () => {
    const before = await tool("readability_analyzer");
    const response = await setAvailability("readability_analyzer", {
      modes: ["review"],
      minRole: "member",
    });
    expect(response.status).toBe(200);
    expect((await tool("readability_analyzer")).availability).toEqual({
      enabled: true,
      modes: ["review"],
      minRole: "member",
    });
    expect(await available(memberKey)).not.toContain("readability_analyzer");
    const inReview = await system.request("/v1/tools?mode=review", { key: memberKey });
    const { tools } = (await inReview.json()) as { tools: { id: string; available: boolean }[] };
    expect(tools.find((t) => t.id === "readability_analyzer")?.available).toBe(true);
    await setAvailability("readability_analyzer", before.availability);
    expect((await tool("readability_analyzer")).availability).toEqual(before.availability);
  });

  it("refuses an unknown role or mode with a 400 naming the field", async () => {
    const role = await setAvailability("ops_echo", { minRole: "owner" });
    expect(role.status).toBe(400);
    expect(await role.json()).toMatchObject({
      error: {
        code: "invalid_request",
        details: [{ path: "minRole", message: expect.stringContaining("viewer, member, admin") }],
      },
    });
    const mode = await setAvailability("ops_echo", { modes: ["default", "party"] });
    expect(mode.status).toBe(400);
    expect(await mode.json()).toMatchObject({
      error: { details: [{ path: "modes.1", message: expect.stringContaining("party") }] },
    });
    const unknownField = await setAvailability("ops_echo", { minRole: "member", roles: ["x"] });
    expect(unknownField.status).toBe(400);
    expect((await tool("ops_echo")).availability).toEqual({ enabled: true, minRole: "viewer" });
  });

  it("refuses a non-admin (403), an unknown tool (404) and a stale If-Match (409)", async () => {
    const member = await setAvailability("ops_echo", {}, { key: memberKey });
    expect(member.status).toBe(403);
    const missing = await setAvailability("no_such_tool", {});
    expect(missing.status).toBe(404);
    const current = await tool("ops_echo");
    const stale = await setAvailability(
      "ops_echo",
      { minRole: "member" },
      { ifMatch: `"${current.revision - 1}"` },
    );
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: "conflict" } });
    expect((await tool("ops_echo")).availability).toEqual(current.availability);
  });
});
