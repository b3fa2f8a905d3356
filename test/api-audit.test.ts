import { QueryCommand } from "@aws-sdk/client-dynamodb";
import type { MiddlewareHandler } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "./support/dynamodb";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * GET /v1/audit (admin): every admin write that succeeded, newest first, with who made it
 * (a key id, never a key), the request, its target, the object it touched (ids and names, never
 * a secret), and the versions it replaced and made. Reads and refused writes leave nothing.
 */
let system: TestToolbus;
let upstream: McpUpstream;
/** A registered MCP server's token: it must appear in no entry. */
const TOKEN = "w-token-3c9f1a";

interface AuditObjectView {
  kind: string;
  id: string;
  name?: string;
  role?: string;
  toolset?: string;
  touched?: string[];
  touchedCount?: number;
}

interface Entry {
  actor: { keyId: string; role: string };
  action: string;
  target: string;
  object?: AuditObjectView;
  status: number;
  before?: string;
  after?: string;
}

const forecast = textTool("forecast", "Tomorrow's forecast.", "21 C");
const alerts = textTool("alerts", "Active weather alerts.", "none");

beforeAll(async () => {
  upstream = await startMcpUpstream([forecast, alerts], {
    requiredHeader: { name: "authorization", value: `Bearer ${TOKEN}` },
  });
  system = await startTestToolbus({
    config: { outbound: { allowHosts: ["127.0.0.1"] } },
    secrets: { TOOLSET_WEATHER_TOKEN: TOKEN },
  });
  // A write route added after the fact, with no code for the audit: what a new admin route is.
  const asAdmin: MiddlewareHandler = async (c, next) => {
    c.set("permission", "admin");
    await next();
  };
  system.app.post("/v1/subscriptions/:id/archive", asAdmin, (c) => c.json({ archived: true }));
  await system.request("/v1/toolsets/audit_kit", {
    method: "PUT",
    json: { name: "audit_kit", description: "Tools the audit tests write", owner: "audit-tests" },
  });
});
afterAll(async () => {
  await system?.stop();
  await upstream?.close();
});

async function audit(query = ""): Promise<{ entries: Entry[]; cursor: string | null }> {
  const response = await system.request(`/v1/audit${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { entries: Entry[]; cursor: string | null };
}

/** The newest entry. */
async function latest(): Promise<Entry> {
  const [entry] = (await audit("?limit=1")).entries;
  if (!entry) throw new Error("The audit log is empty.");
  return entry;
}

/** Every audit item as DynamoDB holds it, attributes and all: what no secret may be in. */
async function storedItems(): Promise<string> {
  const client = testDynamoDbClient();
  try {
    const page = await client.send(
      new QueryCommand({
        TableName: system.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": { S: "AUDIT" } },
      }),
    );
    return JSON.stringify(page.Items ?? []);
  } finally {
    client.destroy();
  }
}

function registration(name: string, description = "The weather team's MCP server") {
  return {
    kind: "mcp",
    name,
    description,
    owner: "team-weather",
    url: upstream.url,
    auth: { header: "Authorization", secret: "TOOLSET_WEATHER_TOKEN", prefix: "Bearer " },
  };
}

function toolBody(id: string) {
  return {
    id,
    toolset: "audit_kit",
    title: `Tool ${id}`,
    description: "Written by an audit test.",
    category: "utility",
    usageHint: "Only in tests.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
  };
}

/** An object with its touched ids sorted, to compare without caring for their order. */
function sorted(object: AuditObjectView | undefined): AuditObjectView | undefined {
  return object?.touched ? { ...object, touched: [...object.touched].sort() } : object;
}

describe("the audit log", () => {
  it("records admin writes with their actor, object and versions, newest first", async () => {
    const before = (await audit()).entries.length;
    const disabled = await system.request("/v1/tools/static_links/disable", { method: "POST" });
    const { revision } = (await disabled.json()) as { revision: number };
    await system.request("/v1/tools/static_links/enable", {
      method: "POST",
      headers: { "if-match": `"${revision}"` },
    });
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "auditor", role: "member" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    await system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
    // Reads and refused writes are not admin writes that happened.
    await system.request("/v1/tools");
    await system.request("/v1/tools/no_such_tool/enable", { method: "POST" });

    const { entries } = await audit();
    expect(entries.length - before).toBe(4);
    const auditor = { kind: "key", id: keyId, name: "auditor", role: "member" };
    const links = { kind: "tool", id: "static_links", toolset: expect.any(String) };
    expect(entries.slice(0, 4)).toEqual([
      expect.objectContaining({
        action: "DELETE",
        target: `/v1/keys/${keyId}`,
        object: auditor,
      }),
      expect.objectContaining({
        action: "POST",
        target: "/v1/keys",
        object: auditor,
        status: 201,
      }),
      expect.objectContaining({
        action: "POST",
        target: "/v1/tools/static_links/enable",
        object: links,
        before: `"${revision}"`,
        after: `"${revision + 1}"`,
      }),
      expect.objectContaining({
        action: "POST",
        target: "/v1/tools/static_links/disable",
        object: links,
        after: `"${revision}"`,
      }),
    ]);
    for (const entry of entries.slice(0, 4)) {
      expect(entry.actor).toEqual({ keyId: "admin-bootstrap", role: "admin" });
    }
    expect(JSON.stringify(entries)).not.toContain(key);
  });

  it("pages with a cursor and refuses a forged one", async () => {
    const all = (await audit("?limit=100")).entries;
    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: Entry[]; cursor: string | null } = await audit(
        `?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      paged.push(...page.entries);
      cursor = page.cursor;
    } while (cursor);
    expect(paged).toEqual(all);
    for (const forged of ["bm90LWEta2V5", "!!", "x".repeat(3000)]) {
      const response = await system.request(`/v1/audit?cursor=${forged}`);
      expect(response.status).toBe(400);
    }
  });

  it("is for admins only", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "viewer", role: "viewer" },
    });
    const { key } = (await created.json()) as { key: string };
    expect((await system.request("/v1/audit", { key })).status).toBe(403);
  });
});

describe("the object an audit entry names", () => {
  it("names a created key by id, name and role, and never stores the key", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "ci-deployer", role: "member" },
    });
    expect(created.status).toBe(201);
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    expect((await latest()).object).toEqual({
      kind: "key",
      id: keyId,
      name: "ci-deployer",
      role: "member",
    });
    expect(await storedItems()).toContain(keyId);
    expect(await storedItems()).not.toContain(key);
  });

  it("names a revoked key by its id", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "leaked", role: "viewer" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    const revoked = await system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(await latest()).toMatchObject({
      action: "DELETE",
      object: { kind: "key", id: keyId, name: "leaked", role: "viewer" },
    });
    expect(await storedItems()).not.toContain(key);
  });

  it("names a registered toolset and its tools when it is registered, updated, refreshed and removed, never its secret", async () => {
    const path = "/v1/registered-toolsets/audit_weather";
    const registered = await system.request(path, {
      method: "PUT",
      json: registration("audit_weather"),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const named = { kind: "toolset", id: "audit_weather", touched: ["alerts", "forecast"] };
    expect(sorted((await latest()).object)).toEqual(named);

    const updated = await system.request(path, {
      method: "PUT",
      json: registration("audit_weather", "The weather team's server, renamed"),
    });
    expect(updated.status).toBe(200);
    expect(sorted((await latest()).object)).toEqual(named);

    // The server drops a tool: the refresh names the one it kept and the one whose removal
    // it holds for review; accepting the removal names that one.
    upstream.setTools([forecast]);
    try {
      const refreshed = await system.request(`${path}/refresh`, { method: "POST" });
      expect(refreshed.status).toBe(200);
      expect(sorted((await latest()).object)).toEqual(named);
      const accepted = await system.request(`${path}/review/accept`, { method: "POST" });
      expect(accepted.status).toBe(200);
      expect(await latest()).toMatchObject({
        action: "POST",
        object: { kind: "toolset", id: "audit_weather", touched: ["alerts"] },
      });
    } finally {
      upstream.setTools([forecast, alerts]);
    }

    const removed = await system.request(path, { method: "DELETE" });
    expect(removed.status).toBe(200);
    expect(await latest()).toMatchObject({
      action: "DELETE",
      object: { kind: "toolset", id: "audit_weather", touched: ["forecast"] },
    });
    expect(await storedItems()).not.toContain(TOKEN);
  });

  it("names a built-in toolset, and a tool with its toolset", async () => {
    const toolset = await system.request("/v1/toolsets/audit_kit", {
      method: "PUT",
      headers: { "if-match": '"1"' },
      json: { name: "audit_kit", description: "Updated", owner: "audit-tests" },
    });
    expect(toolset.status).toBe(200);
    expect((await latest()).object).toEqual({ kind: "toolset", id: "audit_kit" });
    const tool = await system.request("/v1/tools/audit_named", {
      method: "PUT",
      json: toolBody("audit_named"),
    });
    expect(tool.status).toBe(201);
    expect((await latest()).object).toEqual({
      kind: "tool",
      id: "audit_named",
      toolset: "audit_kit",
    });
  });

  it("names the tool that was enabled or disabled", async () => {
    for (const action of ["disable", "enable"]) {
      const response = await system.request(`/v1/tools/static_links/${action}`, {
        method: "POST",
      });
      expect(response.status).toBe(200);
      const { toolset } = (await response.json()) as { toolset: string };
      expect(await latest()).toMatchObject({
        target: `/v1/tools/static_links/${action}`,
        object: { kind: "tool", id: "static_links", toolset },
      });
    }
  });

  it("lists at most 50 of the ids a bulk write touched, with the count of all", async () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      textTool(`bulk_${String(i).padStart(2, "0")}`, "One of many.", "ok"),
    );
    const server = await startMcpUpstream(many);
    try {
      const response = await system.request("/v1/registered-toolsets/audit_bulk", {
        method: "PUT",
        json: {
          kind: "mcp",
          name: "audit_bulk",
          description: "Many tools",
          owner: "team-bulk",
          url: server.url,
        },
      });
      expect(response.status).toBe(201);
      const { object } = await latest();
      expect(object?.touched).toHaveLength(50);
      expect(object?.touchedCount).toBe(60);
      expect(new Set(object?.touched).size).toBe(50);
    } finally {
      await server.close();
    }
  });

  it("derives the object from the path of an admin write route that says nothing", async () => {
    const response = await system.request("/v1/subscriptions/sub-42/archive", { method: "POST" });
    expect(response.status).toBe(200);
    expect(await latest()).toMatchObject({
      target: "/v1/subscriptions/sub-42/archive",
      object: { kind: "subscription", id: "sub-42" },
    });
  });

  it("names an object for every admin write the API documents", async () => {
    const document = (await (await system.request("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { "x-toolbus-permission"?: string }>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([method, op]) => method !== "get" && op["x-toolbus-permission"] === "admin")
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    let keyId = "";
    const weather = "/v1/registered-toolsets/audit_surface";
    const surfaceTools = { kind: "toolset", id: "audit_surface", touched: ["alerts", "forecast"] };
    const tool = { kind: "tool", id: "audit_surface_tool", toolset: "audit_kit" };
    // Every admin write, in an order that works, with the object its entry must name. A new
    // admin route fails here until it is added, with the object it names.
    const writes: {
      route: string;
      run: () => Promise<Response>;
      object: (body: Record<string, unknown>) => AuditObjectView;
    }[] = [
      {
        route: "PUT /v1/toolsets/{name}",
        run: () =>
          system.request("/v1/toolsets/audit_surface_kit", {
            method: "PUT",
            json: { name: "audit_surface_kit", description: "Surface", owner: "audit-tests" },
          }),
        object: () => ({ kind: "toolset", id: "audit_surface_kit" }),
      },
      {
        route: "PUT /v1/tools/{id}",
        run: () =>
          system.request("/v1/tools/audit_surface_tool", {
            method: "PUT",
            json: toolBody("audit_surface_tool"),
          }),
        object: () => tool,
      },
      {
        route: "POST /v1/tools/{id}/disable",
        run: () => system.request("/v1/tools/audit_surface_tool/disable", { method: "POST" }),
        object: () => tool,
      },
      {
        route: "POST /v1/tools/{id}/enable",
        run: () => system.request("/v1/tools/audit_surface_tool/enable", { method: "POST" }),
        object: () => tool,
      },
      {
        route: "PUT /v1/tools/{id}/availability",
        run: () =>
          system.request("/v1/tools/audit_surface_tool/availability", {
            method: "PUT",
            json: { minRole: "member" },
          }),
        object: () => tool,
      },
      {
        route: "PUT /v1/registered-toolsets/{name}",
        run: () => system.request(weather, { method: "PUT", json: registration("audit_surface") }),
        object: () => surfaceTools,
      },
      {
        route: "POST /v1/registered-toolsets/{name}/refresh",
        run: () => system.request(`${weather}/refresh`, { method: "POST" }),
        object: () => surfaceTools,
      },
      {
        route: "POST /v1/registered-toolsets/{name}/review/accept",
        run: () => system.request(`${weather}/review/accept`, { method: "POST" }),
        object: () => ({ kind: "toolset", id: "audit_surface", touched: [] }),
      },
      {
        route: "POST /v1/registered-toolsets/{name}/review/reject",
        run: () => system.request(`${weather}/review/reject`, { method: "POST" }),
        object: () => ({ kind: "toolset", id: "audit_surface", touched: [] }),
      },
      {
        route: "DELETE /v1/registered-toolsets/{name}",
        run: () => system.request(weather, { method: "DELETE" }),
        object: () => surfaceTools,
      },
      {
        route: "POST /v1/keys",
        run: async () => {
          const response = await system.request("/v1/keys", {
            method: "POST",
            json: { name: "surface", role: "viewer" },
          });
          keyId = ((await response.clone().json()) as { keyId: string }).keyId;
          return response;
        },
        object: () => ({ kind: "key", id: keyId, name: "surface", role: "viewer" }),
      },
      {
        route: "DELETE /v1/keys/{keyId}",
        run: () => system.request(`/v1/keys/${keyId}`, { method: "DELETE" }),
        object: () => ({ kind: "key", id: keyId, name: "surface", role: "viewer" }),
      },
      {
        route: "POST /v1/capabilities/refresh",
        run: () => system.request("/v1/capabilities/refresh", { method: "POST" }),
        object: (body) => ({
          kind: "capability",
          id: "*",
          touched: (body.capabilities as { name: string }[]).map((c) => c.name).sort(),
        }),
      },
    ];
    expect(documented.sort()).toEqual(writes.map((write) => write.route).sort());
    for (const write of writes) {
      const response = await write.run();
      expect(response.status, write.route).toBeLessThan(300);
      const body = (await response.json()) as Record<string, unknown>;
      const entry = await latest();
      expect(entry.action, write.route).toBe(write.route.split(" ")[0]);
      expect(sorted(entry.object), write.route).toEqual(write.object(body));
    }
    expect(await storedItems()).not.toContain(TOKEN);
  });
});
