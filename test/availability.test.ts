import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * Honest availability: a built-in tool that reaches the internet requires `network`, and every
 * surface (POST /v1/select, GET /v1/tools, GET /v1/tools/search, MCP tools/list) asks the
 * same selection, so a tool whose capability is missing is left out everywhere, with its
 * reason where the surface gives reasons. A tool whose fallback can serve is offered
 * everywhere, saying so; a fallback that cannot serve is named in the call's failure.
 */

const LINKS = [
  {
    platform: "github",
    url: "https://github.com/acme/widget",
    label: "Source code",
    tags: ["code"],
  },
];
/** A need only web_search answers among the built-in tools. */
const NEED = "search the web for current information";

interface ListedTool {
  id: string;
  available: boolean;
  reasons?: string[];
  servedBy?: string;
  fallbackReasons?: string[];
}

interface Surfaces {
  selection: {
    tools: string[];
    excluded: Array<{ tool: string; reasons: string[]; fallbackReasons?: string[] }>;
    servedByFallback: Array<{ tool: string; fallback: string; reasons: string[] }>;
  };
  listed: Map<string, ListedTool>;
  found: string[];
  mcp: string[];
}

/** What each of the four surfaces says about the catalog, for the admin key. */
async function surfaces(system: TestToolbus): Promise<Surfaces> {
  const [select, tools, search, mcp] = await Promise.all([
    system.request("/v1/select", { method: "POST", json: {} }),
    system.request("/v1/tools"),
    system.request(`/v1/tools/search?q=${encodeURIComponent(NEED)}&limit=50`),
    system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    }),
  ]);
  for (const response of [select, tools, search, mcp]) expect(response.status).toBe(200);
  const listed = ((await tools.json()) as { tools: ListedTool[] }).tools;
  return {
    selection: (await select.json()) as Surfaces["selection"],
    listed: new Map(listed.map((tool) => [tool.id, tool])),
    found: ((await search.json()) as { tools: Array<{ id: string }> }).tools.map((t) => t.id),
    mcp: ((await mcp.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    ),
  };
}

async function call(system: TestToolbus, tool: string, input: unknown) {
  const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
    method: "POST",
    json: { tool, input, wait: 15 },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    status: string;
    result: {
      output: string;
      data: unknown;
      failure?: { kind: string; message: string; recovery: string };
      fallback?: { from: string; to: string; reason: string };
    };
  };
}

describe("a stage without network and without static links", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await startTestToolbus({ config: { outbound: { networkEnabled: false } } });
  });
  afterAll(() => system.stop());

  it("says why network and static_links are missing", async () => {
    const response = await system.request("/v1/capabilities");
    const { capabilities } = (await response.json()) as {
      capabilities: Array<{ name: string; available: boolean; reason?: string }>;
    };
    const byName = new Map(capabilities.map((c) => [c.name, c]));
    expect(byName.get("network")).toMatchObject({
      available: false,
      reason: "Outbound network access is disabled on this stage.",
    });
    expect(byName.get("static_links")).toMatchObject({
      available: false,
      reason: "static_links has no links configured on this stage.",
    });
  });

  it("leaves web_search out of every surface, with its reason and its fallback's", async () => {
    const { selection, listed, found, mcp } = await surfaces(system);
    expect(selection.tools).not.toContain("web_search");
    expect(selection.excluded).toContainEqual({
      tool: "web_search",
      reasons: ["capability:network"],
      fallbackReasons: ["capability:static_links"],
    });
    expect(selection.servedByFallback).toEqual([]);
    expect(listed.get("web_search")).toMatchObject({
      available: false,
      reasons: ["capability:network"],
      fallbackReasons: ["capability:static_links"],
    });
    expect(listed.get("web_search")).not.toHaveProperty("servedBy");
    expect(found).not.toContain("web_search");
    expect(mcp).not.toContain("web_search");
  });

  it("leaves out every tool that reaches the internet, and offers those that compute offline", async () => {
    const { selection, listed, found, mcp } = await surfaces(system);
    const online = ["calendar", "github_api", "link_validator", "rss_feed", "web_search"];
    for (const id of online) {
      expect(selection.tools, id).not.toContain(id);
      expect(selection.excluded.find((e) => e.tool === id)?.reasons, id).toContain(
        "capability:network",
      );
      expect(listed.get(id)?.available, id).toBe(false);
      expect(listed.get(id)?.reasons, id).toContain("capability:network");
      expect(found, id).not.toContain(id);
      expect(mcp, id).not.toContain(id);
    }
    expect([...selection.tools].sort()).toEqual(["readability_analyzer", "static_links"]);
    expect([...mcp].sort()).toEqual(["readability_analyzer", "static_links"]);
  });

  it("fails a call anyway made to web_search as unavailable, naming the fallback that cannot serve", async () => {
    const view = await call(system, "web_search", { query: "typescript zod" });
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(view.result.failure?.message).toBe(
      "web_search is unavailable: Outbound network access is disabled on this stage. " +
        "web_search's fallback static_links has no links configured on this stage.",
    );
    expect(view.result).not.toHaveProperty("fallback");
  });

  it("fails a tool without a fallback with its own reason only", async () => {
    const view = await call(system, "rss_feed", {
      action: "fetch",
      url: "https://example.com/feed.xml",
    });
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({
      kind: "unavailable",
      message: "rss_feed is unavailable: Outbound network access is disabled on this stage.",
    });
  });
});

describe("a stage without network whose static links are configured", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await startTestToolbus({
      config: { outbound: { networkEnabled: false }, tools: { static_links: { links: LINKS } } },
    });
  });
  afterAll(() => system.stop());

  it("offers web_search on every surface, saying static_links serves it", async () => {
    const { selection, listed, found, mcp } = await surfaces(system);
    expect(selection.tools).toContain("web_search");
    expect(selection.excluded.map((e) => e.tool)).not.toContain("web_search");
    expect(selection.servedByFallback).toEqual([
      { tool: "web_search", fallback: "static_links", reasons: ["capability:network"] },
    ]);
    expect(listed.get("web_search")).toMatchObject({
      available: true,
      reasons: ["capability:network"],
      servedBy: "static_links",
    });
    expect(found).toContain("web_search");
    expect(mcp).toContain("web_search");
    // Only web_search has a fallback: the other tools that need the network stay out.
    expect(selection.tools).not.toContain("rss_feed");
    expect(mcp).not.toContain("rss_feed");
  });

  it("answers a web_search call with static_links, and says so", async () => {
    const view = await call(system, "web_search", { query: "widget source code" });
    expect(view.status).toBe("succeeded");
    expect(view.result.fallback).toMatchObject({
      from: "web_search",
      to: "static_links",
      reason: "web_search is unavailable: Outbound network access is disabled on this stage.",
    });
    expect(view.result.output).toContain("https://github.com/acme/widget");
  });
});

describe("a stage whose network is on but whose search engine cannot be reached", () => {
  let system: TestToolbus;
  let withLinks: TestToolbus;
  beforeAll(async () => {
    const closed = await closedPort();
    const config = (links?: unknown) => ({
      outbound: { allowHosts: ["127.0.0.1"] },
      tools: {
        web_search: { duckduckgoUrl: `http://127.0.0.1:${closed}/html/` },
        ...(links ? { static_links: { links } } : {}),
      },
    });
    [system, withLinks] = await Promise.all([
      startTestToolbus({ config: config() }),
      startTestToolbus({ config: config(LINKS) }),
    ]);
  });
  afterAll(() => Promise.all([system?.stop(), withLinks?.stop()]));

  it("fails upstream, saying the fallback has no links configured", async () => {
    const view = await call(system, "web_search", { query: "typescript zod" });
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "upstream_error", recovery: "replan" });
    expect(view.result.failure?.message).toBe(
      "DuckDuckGo could not be reached. " +
        "web_search's fallback static_links has no links configured on this stage.",
    );
  });

  it("answers through static_links when it has links", async () => {
    const view = await call(withLinks, "web_search", { query: "typescript zod" });
    expect(view.status).toBe("succeeded");
    expect(view.result.fallback).toMatchObject({
      from: "web_search",
      to: "static_links",
      reason: "DuckDuckGo could not be reached.",
    });
    expect(view.result.output).toContain("https://github.com/acme/widget");
  });
});

/*
 * Whether the fallback may answer for a caller is selection's to say, when the call is
 * accepted: an administrator who disables static_links, or raises its minRole, closes it as a
 * stand-in for web_search too, for exactly the callers selection would not offer it to.
 */
describe("a fallback an administrator has closed", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    const closed = await closedPort();
    system = await startTestToolbus({
      config: {
        outbound: { allowHosts: ["127.0.0.1"] },
        tools: {
          web_search: { duckduckgoUrl: `http://127.0.0.1:${closed}/html/` },
          static_links: { links: LINKS },
        },
      },
    });
  });
  afterAll(() => system?.stop());

  async function memberKey(): Promise<string> {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "caller", role: "member" },
    });
    expect(created.status).toBe(201);
    return ((await created.json()) as { key: string }).key;
  }

  async function callAs(key: string | undefined) {
    const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
      method: "POST",
      json: { tool: "web_search", input: { query: "typescript zod" }, wait: 15 },
      ...(key ? { key } : {}),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Awaited<ReturnType<typeof call>>;
  }

  it("does not answer web_search with static_links once static_links is disabled, and says why", async () => {
    const disabled = await system.request("/v1/tools/static_links/disable", { method: "POST" });
    expect(disabled.status).toBe(200);
    try {
      const view = await callAs(undefined);
      expect(view.status).toBe("failed");
      expect(view.result).not.toHaveProperty("fallback");
      expect(view.result.failure).toMatchObject({ kind: "upstream_error", recovery: "replan" });
      expect(view.result.failure?.message).toBe(
        "DuckDuckGo could not be reached. " +
          "web_search's fallback static_links is not available to this caller (disabled).",
      );
      expect(view.result.output).not.toContain("https://github.com/acme/widget");
    } finally {
      await system.request("/v1/tools/static_links/enable", { method: "POST" });
    }
  });

  it("answers through static_links again once it is enabled, links configured", async () => {
    const view = await callAs(undefined);
    expect(view.status).toBe("succeeded");
    expect(view.result.fallback).toMatchObject({ from: "web_search", to: "static_links" });
    expect(view.result.output).toContain("https://github.com/acme/widget");
  });

  it("blocks static_links as a stand-in only for callers below its minRole", async () => {
    const member = await memberKey();
    const read = await system.request("/v1/tools/static_links");
    expect(read.status).toBe(200);
    const {
      revision: _revision,
      updatedAt: _updatedAt,
      ...spec
    } = (await read.json()) as {
      revision: number;
      updatedAt: string;
      availability: Record<string, unknown>;
    };
    const raised = await system.request("/v1/tools/static_links", {
      method: "PUT",
      json: { ...spec, availability: { ...spec.availability, minRole: "admin" } },
    });
    expect(raised.status).toBe(200);

    const refused = await callAs(member);
    expect(refused.status).toBe("failed");
    expect(refused.result).not.toHaveProperty("fallback");
    expect(refused.result.failure).toMatchObject({ kind: "upstream_error", recovery: "replan" });
    expect(refused.result.failure?.message).toBe(
      "DuckDuckGo could not be reached. " +
        "web_search's fallback static_links is not available to this caller (role).",
    );

    const admin = await callAs(undefined);
    expect(admin.status).toBe("succeeded");
    expect(admin.result.fallback).toMatchObject({ from: "web_search", to: "static_links" });
    expect(admin.result.output).toContain("https://github.com/acme/widget");
  });
});

/** A loopback port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
