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

/** A loopback port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}
