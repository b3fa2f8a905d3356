import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { secretCapability } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { kangarooTool } from "./support/kangaroo-tools";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const toolset: ToolsetSpec = {
  name: "search_kit",
  description: "Tools with every kind of availability, for search tests.",
  owner: "search-tests",
  kind: "builtin",
};

const kitTool = (id: string, title: string, spec: Record<string, unknown> = {}) =>
  kangarooTool(toolset.name, id, title, spec);

const tools = [
  kitTool("roo_open", "Open kangaroo counter"),
  kitTool("roo_review", "Review kangaroo counter", { availability: { modes: ["review"] } }),
  kitTool("roo_admin", "Admin kangaroo counter", { availability: { minRole: "admin" } }),
  kitTool("roo_secret", "Secret kangaroo counter", { requires: ["roo_secret_key"] }),
  kitTool("roo_off", "Disabled kangaroo counter", { availability: { enabled: false } }),
];

let system: TestToolbus;
let api: ApiServer;
let viewerKey: string;
const clients: Client[] = [];

beforeAll(async () => {
  system = await startTestToolbus({
    config: {
      modes: { default: "draft", available: ["draft", "review"] },
      // Registered tools may point at loopback; none is called here.
      outbound: { allowHosts: ["127.0.0.1"] },
    },
    tools: [...builtinTools, ...tools],
    toolsets: [...builtinToolsets, toolset],
    capabilities: [secretCapability("roo_secret_key", "ROO_SECRET", "A secret no test sets.")],
    secrets: {},
  });
  api = await serveApi(system.app, { port: 0 });
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "search-viewer", role: "viewer" },
  });
  expect(response.status).toBe(201);
  viewerKey = ((await response.json()) as { key: string }).key;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await api?.close();
  await system?.stop();
});

interface Found {
  catalogVersion: string;
  mode: string;
  role: string;
  tools: Array<{ id: string; score: number; matched: string[]; inputSchema: unknown }>;
}

async function search(query: Record<string, string>, key?: string): Promise<Found> {
  const response = await system.request(`/v1/tools/search?${new URLSearchParams(query)}`, {
    ...(key ? { key } : {}),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Found;
}

async function selected(json: Record<string, unknown>, key?: string): Promise<string[]> {
  const response = await system.request("/v1/select", {
    method: "POST",
    json,
    ...(key ? { key } : {}),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { tools: string[] }).tools;
}

const ids = (found: Found) => found.tools.map((tool) => tool.id);
/** The kit's tools among those found (other tools may mention kangaroos by chance, or typo). */
const roos = (found: Found) => ids(found).filter((id) => id.startsWith("roo_"));

describe("GET and POST /v1/tools/search", () => {
  it("finds only what the selection offers, for every role and mode", async () => {
    const cases = [
      { key: system.adminKey, mode: "draft" },
      { key: system.adminKey, mode: "review" },
      { key: viewerKey, mode: "draft" },
      { key: viewerKey, mode: "review" },
    ];
    for (const { key, mode } of cases) {
      const found = roos(await search({ q: "count kangaroos", limit: "50", mode }, key));
      const offered = (await selected({ mode }, key)).filter((id) => id.startsWith("roo_"));
      expect(found.sort()).toEqual(offered.sort());
    }
    // The same reasons as /v1/select: mode, role, capability and disabled each keep one out.
    expect(roos(await search({ q: "kangaroo", limit: "50" })).sort()).toEqual([
      "roo_admin",
      "roo_open",
    ]);
    expect(roos(await search({ q: "kangaroo", mode: "review", limit: "50" })).sort()).toEqual([
      "roo_admin",
      "roo_open",
      "roo_review",
    ]);
    expect(roos(await search({ q: "kangaroo", limit: "50" }, viewerKey))).toEqual(["roo_open"]);
    expect(ids(await search({ q: "secret kangaroo counter" }))).not.toContain("roo_secret");
    expect(ids(await search({ q: "disabled kangaroo counter" }))).not.toContain("roo_off");
  });

  it("narrows by allow and deny in a POST, and ranks by the words of the need", async () => {
    const response = await system.request("/v1/tools/search", {
      method: "POST",
      json: { q: "kangaroo", allow: ["roo_open", "roo_admin"], deny: ["roo_admin"], limit: 10 },
    });
    expect(response.status).toBe(200);
    expect(ids((await response.json()) as Found)).toEqual(["roo_open"]);

    const found = await search({ q: "how hard is this paragraph to read" });
    expect(found.tools[0]?.id).toBe("readability_analyzer");
    expect(found.tools[0]?.matched.length).toBeGreaterThan(0);
    expect(found.tools[0]?.inputSchema).toMatchObject({ type: "object" });
    // Typos and other word forms still find what they mean.
    expect(ids(await search({ q: "readabilty scor" }))[0]).toBe("readability_analyzer");
    expect(ids(await search({ q: "counted kangaroo" }))).toContain("roo_open");
    const scores = found.tools.map((tool) => tool.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("rebuilds when a tool is registered, disabled, enabled and removed", async () => {
    const before = await search({ q: "wombat burrow" });
    expect(ids(before)).not.toContain("wombat_census");
    const registered = await system.request("/v1/registered-toolsets/wombats", {
      method: "PUT",
      json: {
        kind: "http",
        name: "wombats",
        description: "Marsupial surveys.",
        owner: "search-tests",
        tools: [
          {
            id: "wombat_census",
            title: "Wombat census",
            description: "Counts the wombats in each burrow of a survey area.",
            category: "research",
            usageHint: "When a survey needs wombat numbers.",
            url: "http://127.0.0.1:9/wombats/{area}",
            inputSchema: {
              type: "object",
              properties: { area: { type: "string" } },
              required: ["area"],
            },
          },
        ],
      },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const added = await search({ q: "wombat burrow" });
    expect(ids(added)[0]).toBe("wombat_census");
    expect(added.catalogVersion).not.toBe(before.catalogVersion);

    const toggle = (action: string) =>
      system.request(`/v1/tools/wombat_census/${action}`, { method: "POST" });
    expect((await toggle("disable")).status).toBe(200);
    const disabled = await search({ q: "wombat burrow" });
    expect(ids(disabled)).not.toContain("wombat_census");
    expect(disabled.catalogVersion).not.toBe(added.catalogVersion);
    expect((await toggle("enable")).status).toBe(200);
    expect(ids(await search({ q: "wombat burrow" }))[0]).toBe("wombat_census");

    const removed = await system.request("/v1/registered-toolsets/wombats", { method: "DELETE" });
    expect(removed.status).toBeLessThan(300);
    expect(ids(await search({ q: "wombat burrow" }))).not.toContain("wombat_census");
  });

  it("rebuilds when a toolset's description, part of its tools' text, changes", async () => {
    expect(roos(await search({ q: "echidna" }))).toEqual([]);
    const described = await system.request("/v1/toolsets/search_kit", {
      method: "PUT",
      json: { ...toolset, description: "Kangaroo and echidna counters, for search tests." },
    });
    expect(described.status).toBe(200);
    expect(roos(await search({ q: "echidna" }))).toContain("roo_open");
  });

  it("gives a caller scores and a version that tools hidden from it do not move", async () => {
    const before = await search({ q: "platypus sighting", limit: "10" }, viewerKey);
    const registered = await system.request("/v1/tools/platypus_admin", {
      method: "PUT",
      json: {
        id: "platypus_admin",
        toolset: "search_kit",
        title: "Platypus sighting log",
        description: "Records a platypus sighting for admins.",
        category: "utility",
        usageHint: "When a platypus sighting is reported.",
        inputSchema: { type: "object" },
        outputSchema: { type: "object" },
        availability: { minRole: "admin" },
      },
    });
    expect(registered.status).toBe(201);
    const after = await search({ q: "platypus sighting", limit: "10" }, viewerKey);
    expect(after).toEqual(before);
    expect(ids(await search({ q: "platypus sighting" }))[0]).toBe("platypus_admin");
  });

  it("answers odd queries with a 400 or an empty result, never a 500", async () => {
    const refused = [
      "",
      "   ",
      "x".repeat(10_000),
      "bad\u0000byte",
      "half \ud800 character",
      "\u202eevil",
    ];
    for (const q of refused) {
      const response = await system.request("/v1/tools/search", { method: "POST", json: { q } });
      expect(response.status, JSON.stringify(q.slice(0, 20))).toBe(400);
      const body = (await response.json()) as { error: { code: string; details: unknown[] } };
      expect(body.error.code).toBe("invalid_request");
    }
    for (const query of ["q=", "limit=5", "q=x&limit=0", "q=x&limit=51", "q=x&limit=1e400"]) {
      expect((await system.request(`/v1/tools/search?${query}`)).status, query).toBe(400);
    }
    const bodies = [{ q: 42 }, { q: "x", extra: true }, { q: "x", limit: 2 ** 60 }];
    for (const json of bodies) {
      const response = await system.request("/v1/tools/search", { method: "POST", json });
      expect(response.status, JSON.stringify(json)).toBe(400);
    }
    const empty = ["?!", "🦘🦘🦘", "ــــ", "%ff%fe", "ⓚⓐⓝⓖⓐⓡⓞⓞ".repeat(40)];
    for (const q of empty) {
      const response = await system.request(`/v1/tools/search?q=${encodeURIComponent(q)}`);
      expect(response.status, q).toBe(200);
    }
    const raw = await system.request("/v1/tools/search?q=%ff%fe%ed%a0%80");
    expect([200, 400]).toContain(raw.status);
    // Compatibility forms read as their plain letters (NFKC).
    expect(ids(await search({ q: "ｋａｎｇａｒｏｏ" }))).toContain("roo_open");
  });
});

describe("the MCP search surface", () => {
  async function connect(options: { key?: string; query?: string; runId?: string } = {}) {
    const client = new Client({ name: "toolbus-search-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(
      new URL(`${api.url}/mcp${options.query ?? "?surface=search"}`),
      {
        requestInit: {
          headers: {
            Authorization: `Bearer ${options.key ?? system.adminKey}`,
            ...(options.runId ? { "X-Toolbus-Run-Id": options.runId } : {}),
          },
        },
      },
    );
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  it("lists the same two tools whatever the caller and the catalog", async () => {
    const admin = await (await connect()).listTools();
    expect(admin.tools.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
    const viewer = await (await connect({ key: viewerKey })).listTools();
    expect(viewer).toEqual(admin);
    const put = await system.request("/v1/tools/roo_extra", {
      method: "PUT",
      json: {
        id: "roo_extra",
        toolset: "search_kit",
        title: "Extra kangaroo counter",
        description: "Counts extra kangaroos.",
        category: "utility",
        usageHint: "Rarely.",
        inputSchema: { type: "object" },
        outputSchema: { type: "object" },
      },
    });
    expect(put.status).toBe(201);
    const header = new Client({ name: "toolbus-search-test", version: "1.0.0" });
    clients.push(header);
    await header.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: {
          headers: { Authorization: `Bearer ${system.adminKey}`, "X-Toolbus-Surface": "search" },
        },
      }),
    );
    expect(await header.listTools()).toEqual(admin);
    const everything = await (await connect({ query: "" })).listTools();
    expect(everything.tools.map((tool) => tool.name)).toContain("roo_extra");
  });

  it("searches and calls through the same path, selection and events as any call", async () => {
    const runId = system.runId();
    const client = await connect({ runId });
    const found = (await client.callTool({
      name: "search_tools",
      arguments: { query: "how readable is my text", limit: 3 },
    })) as CallToolResult;
    expect(found.isError).toBe(false);
    const tools = (found.structuredContent as { tools: Array<{ id: string }> }).tools;
    expect(tools[0]?.id).toBe("readability_analyzer");

    const result = (await client.callTool({
      name: "call_tool",
      arguments: {
        tool: "readability_analyzer",
        arguments: { text: "The cat sat on the mat. It was happy." },
      },
      _meta: { "toolbus/callId": "search-call-1" },
    })) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(result._meta).toMatchObject({
      "toolbus/callId": "search-call-1",
      "toolbus/status": "succeeded",
    });
    const events = await system.events(runId);
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
    expect(events[0]?.detail).toMatchObject({
      toolId: "readability_analyzer",
      callId: "search-call-1",
    });
  });

  it("refuses what a direct call would refuse, as results or errors the model can read", async () => {
    const viewer = await connect({ key: viewerKey });
    // Viewers may read (and so search) but not call.
    const searched = (await viewer.callTool({
      name: "search_tools",
      arguments: { query: "kangaroo" },
    })) as CallToolResult;
    const viewerFound = (searched.structuredContent as { tools: Array<{ id: string }> }).tools;
    expect(viewerFound.map((tool) => tool.id)).toContain("roo_open");
    expect(viewerFound.map((tool) => tool.id)).not.toContain("roo_admin");
    await expect(
      viewer.callTool({
        name: "call_tool",
        arguments: { tool: "roo_open", arguments: { text: "x" } },
      }),
    ).rejects.toThrow(/member role/);

    const admin = await connect();
    await expect(
      admin.callTool({
        name: "call_tool",
        arguments: { tool: "roo_review", arguments: { text: "x" } },
      }),
    ).rejects.toThrow(/not offered in mode draft/);
    await expect(
      admin.callTool({ name: "call_tool", arguments: { tool: "no_such_tool" } }),
    ).rejects.toThrow(/Unknown tool: no_such_tool/);

    const badSearch = (await admin.callTool({
      name: "search_tools",
      arguments: { query: "", extra: 1 },
    })) as CallToolResult;
    expect(badSearch.isError).toBe(true);
    expect(badSearch._meta?.["toolbus/issues"]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "query" }),
        expect.objectContaining({ path: "extra" }),
      ]),
    );
    const badCall = (await admin.callTool({ name: "call_tool", arguments: {} })) as CallToolResult;
    expect(badCall.isError).toBe(true);
    const badInput = (await admin.callTool({
      name: "call_tool",
      arguments: { tool: "readability_analyzer", arguments: { nope: true } },
    })) as CallToolResult;
    expect(badInput.isError).toBe(true);
    expect(badInput._meta?.["toolbus/status"]).toBe("rejected");
    // Paths as the model wrote them: under call_tool's `arguments`.
    const issues = (badInput._meta?.["toolbus/issues"] ?? []) as Array<{ path: string }>;
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.every((issue) => issue.path.startsWith("arguments"))).toBe(true);
    const nullInput = (await admin.callTool({
      name: "call_tool",
      arguments: { tool: "readability_analyzer", arguments: null },
    })) as CallToolResult;
    expect(nullInput.isError).toBe(true);
    expect(nullInput._meta?.["toolbus/issues"]).toEqual([
      expect.objectContaining({ path: "arguments" }),
    ]);
    // Only the two tools it lists: a catalog tool is reached through call_tool.
    await expect(
      admin.callTool({ name: "readability_analyzer", arguments: { text: "Hi there." } }),
    ).rejects.toThrow(/Unknown tool: readability_analyzer/);

    const unknownSurface = await fetch(`${api.url}/mcp?surface=everything`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${system.adminKey}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(unknownSurface.status).toBe(400);
  });
});

describe("the prompt section for the search surface", () => {
  it("describes the two tools, byte for byte the same whatever the catalog holds", async () => {
    const prompt = async (key?: string) => {
      const response = await system.request("/v1/prompt", {
        method: "POST",
        json: { style: "search" },
        ...(key ? { key } : {}),
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const first = await prompt();
    expect(first).toContain("`search_tools`");
    expect(first).toContain("`call_tool`");
    expect(first).not.toContain("readability_analyzer");
    expect(await prompt(viewerKey)).toBe(first);
    await system.request("/v1/tools/roo_open/disable", { method: "POST" });
    try {
      expect(await prompt()).toBe(first);
    } finally {
      await system.request("/v1/tools/roo_open/enable", { method: "POST" });
    }
    const listed = await system.request("/v1/prompt", { method: "POST", json: {} });
    expect(await listed.text()).toContain("readability_analyzer");
  });
});
