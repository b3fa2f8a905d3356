import { builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * A registration whose names are not free is refused with every clash at once: the toolset's
 * name (a built-in's or another owner's), tool ids given twice and ids other toolsets hold,
 * each with its path and a free name, so applying the suggestions registers it in one more
 * round trip. And untitled remote tools get their name read as a title, which a refresh of an
 * unchanged server never holds as a change.
 */

let weather: McpUpstream;
let crowded: McpUpstream;
let plain: McpUpstream;
let system: TestToolbus;

/** Eight tools: every id but `fine_tool` clashes with the catalog or with another of them. */
const crowdedTools = [
  textTool("getForecast", "Forecast.", "sun"),
  textTool("get_forecast", "Forecast again.", "sun"),
  textTool("alerts", "Alerts.", "none"),
  textTool("readabilityAnalyzer", "Reads.", "easy"),
  textTool("search", "Searches.", "found"),
  textTool("Search", "Searches too.", "found"),
  textTool("9lives", "Nine lives.", "meow"),
  textTool("fine_tool", "Fine.", "ok"),
];

interface Clash {
  path: string;
  message: string;
  suggestion: string;
}
interface Refusal {
  error: { code: string; message: string; details: Clash[] };
}

function mcp(name: string, url: string, extra: Record<string, unknown> = {}) {
  return {
    kind: "mcp",
    name,
    description: `${name} server`,
    owner: "team-clash",
    url,
    defaults: { category: "research" },
    ...extra,
  };
}

async function register(body: { name: string; [field: string]: unknown }) {
  return system.request(`/v1/registered-toolsets/${body.name}`, { method: "PUT", json: body });
}

async function catalogIds(): Promise<{ tools: string[]; toolsets: string[] }> {
  const tools = (await (await system.request("/v1/tools")).json()) as { tools: { id: string }[] };
  const toolsets = (await (await system.request("/v1/toolsets")).json()) as {
    toolsets: { name: string }[];
  };
  return {
    tools: tools.tools.map((tool) => tool.id),
    toolsets: toolsets.toolsets.map((toolset) => toolset.name),
  };
}

beforeAll(async () => {
  weather = await startMcpUpstream([
    textTool("getForecast", "Tomorrow's forecast.", "sun"),
    textTool("alerts", "Weather alerts.", "none"),
  ]);
  crowded = await startMcpUpstream(crowdedTools);
  plain = await startMcpUpstream([
    textTool("create_issue", "Opens an issue.", "#1"),
    textTool("slackListChannels", "Lists channels.", "#general"),
    {
      ...textTool("take_screenshot", "Takes a screenshot.", "png"),
      tool: {
        name: "take_screenshot",
        title: "Screenshot (own title)",
        description: "Takes a screenshot.",
        inputSchema: { type: "object", properties: {} },
      },
    },
  ]);
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await register({ ...mcp("weather", weather.url), owner: "team-weather" });
  expect(registered.status, await registered.clone().text()).toBe(201);
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await Promise.all([weather?.close(), crowded?.close(), plain?.close()]);
});

describe("a registration whose names clash", () => {
  it("reports every clash at once, each with its path and a free name, and the suggestions fix it", async () => {
    const before = await catalogIds();
    const response = await register(mcp("github", crowded.url));
    // The name is a built-in toolset's: a 409 as before, now with every other clash too.
    expect(response.status).toBe(409);
    const body = (await response.json()) as Refusal;
    expect(body.error.code).toBe("conflict");
    expect(body.error.message).toMatch(/^Toolset github is built in/);
    expect(body.error.message).toMatch(/7 names clash in all/);
    const byPath = new Map(body.error.details.map((clash) => [clash.path, clash]));
    expect([...byPath.keys()].sort()).toEqual(
      [
        "name",
        "renames.getForecast", // weather's get_forecast
        "renames.get_forecast", // the same id as getForecast
        "renames.alerts", // weather's
        "renames.readabilityAnalyzer", // a built-in's
        "renames.Search", // the same id as search
        "renames.9lives", // no usable id
      ].sort(),
    );
    expect(byPath.get("renames.getForecast")?.message).toMatch(
      /get_forecast is already registered by toolset weather \(owner team-weather\)/,
    );
    expect(byPath.get("renames.get_forecast")?.message).toMatch(
      /"getForecast" and "get_forecast" would both be get_forecast/,
    );
    expect(byPath.get("renames.readabilityAnalyzer")?.message).toMatch(
      /readability_analyzer is already registered by toolset text_analysis/,
    );
    // Suggestions are valid, distinct and free, and each message says what to send.
    const suggestions = body.error.details.map((clash) => clash.suggestion);
    expect(new Set(suggestions).size).toBe(suggestions.length);
    for (const clash of body.error.details) {
      expect(clash.suggestion).toMatch(/^[a-z][a-z0-9_]{0,47}$/);
      expect(clash.message).toContain(clash.suggestion);
    }
    expect(before.toolsets).not.toContain(byPath.get("name")?.suggestion);
    for (const suggestion of suggestions) expect(before.tools).not.toContain(suggestion);
    // Nothing was written.
    expect(await catalogIds()).toEqual(before);

    // One more round trip: the suggested names, as they are.
    const renames = Object.fromEntries(
      body.error.details
        .filter((clash) => clash.path.startsWith("renames."))
        .map((clash) => [clash.path.slice("renames.".length), clash.suggestion]),
    );
    const name = byPath.get("name")?.suggestion ?? "";
    const fixed = await register(mcp(name, crowded.url, { renames }));
    expect(fixed.status, await fixed.clone().text()).toBe(201);
    const { tools } = (await fixed.json()) as { tools: { id: string }[] };
    expect(tools).toHaveLength(crowdedTools.length);
    expect(tools.map((tool) => tool.id)).toEqual(
      expect.arrayContaining(["fine_tool", "search", ...Object.values(renames)]),
    );
    expect(
      (await system.request(`/v1/registered-toolsets/${name}`, { method: "DELETE" })).status,
    ).toBe(200);
  });

  it("is a 400 listing only the tool ids when the name is free", async () => {
    const response = await register(mcp("crowded", crowded.url));
    expect(response.status).toBe(400);
    const body = (await response.json()) as Refusal;
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((clash) => clash.path)).not.toContain("name");
    expect(body.error.details).toHaveLength(6);
    expect(body.error.message).toMatch(/6 names clash in all/);
  });

  it("lists another owner's toolset name with the ids it holds", async () => {
    const response = await register({ ...mcp("weather", weather.url), owner: "team-other" });
    expect(response.status).toBe(409);
    const body = (await response.json()) as Refusal;
    expect(body.error.message).toMatch(/already registered by owner team-weather/);
    // Under that name the ids are weather's, not this registration's own.
    expect(body.error.details.map((clash) => clash.path).sort()).toEqual([
      "name",
      "renames.alerts",
      "renames.getForecast",
    ]);
    expect(body.error.details[0]?.suggestion).toBe("weather_mcp");
  });

  it("reports a taken name even when the server cannot be listed", async () => {
    const response = await register(mcp("github", "http://127.0.0.1:9/mcp"));
    expect(response.status).toBe(409);
    const body = (await response.json()) as Refusal;
    expect(body.error.details.map((clash) => clash.path)).toEqual(["name"]);
  });

  it("reports every repeated and taken id of an http toolset, before anything is reached", async () => {
    const tool = (id: string) => ({
      id,
      title: id,
      description: "Does a thing.",
      category: "utility",
      usageHint: "When it is needed.",
      url: "http://127.0.0.1:9/thing",
      inputSchema: { type: "object", properties: {} },
    });
    const body = {
      kind: "http",
      name: "text_analysis",
      description: "Clashing",
      owner: "team-clash",
      tools: [tool("thing"), tool("thing"), tool("readability_analyzer"), tool("web_search")],
    };
    const response = await register(body);
    expect(response.status).toBe(409);
    const refusal = (await response.json()) as Refusal;
    expect(refusal.error.details.map((clash) => [clash.path, clash.suggestion])).toEqual([
      ["name", "text_analysis_http"],
      ["tools.1.id", "text_analysis_thing"],
      ["tools.2.id", "text_analysis_readability_analyzer"],
      ["tools.3.id", "text_analysis_web_search"],
    ]);
    expect(refusal.error.details[1]?.message).toMatch(
      /listed twice \(tools\.0\.id and tools\.1\.id\)/,
    );
    const fixed = await register({
      ...body,
      name: "text_analysis_http",
      tools: refusal.error.details
        .filter((clash) => clash.path !== "name")
        .reduce((tools, clash) => {
          const index = Number(clash.path.split(".")[1]);
          return tools.map((t, i) => (i === index ? tool(clash.suggestion) : t));
        }, body.tools),
    });
    expect(fixed.status, await fixed.clone().text()).toBe(201);
  });

  it("holds a refreshed server's added tool whose id is taken, rather than refusing the refresh", async () => {
    const notes = await startMcpUpstream([textTool("note", "Takes a note.", "noted")]);
    try {
      expect((await register(mcp("notes", notes.url))).status).toBe(201);
      notes.setTools([
        textTool("note", "Takes a note.", "noted"),
        textTool("alerts", "Alerts of notes.", "none"),
      ]);
      const refreshed = await system.request("/v1/registered-toolsets/notes/refresh", {
        method: "POST",
      });
      expect(refreshed.status, await refreshed.clone().text()).toBe(200);
      const { held } = (await refreshed.json()) as { held: { added: string[] } };
      expect(held.added).toEqual(["alerts"]);
    } finally {
      await system.request("/v1/registered-toolsets/notes", { method: "DELETE" });
      await notes.close();
    }
  });
});

describe("the reserved toolset names", () => {
  it("are the built-in toolsets' names, each refused to a registration", async () => {
    for (const { name } of builtinToolsets) {
      const response = await register(mcp(name, plain.url));
      expect(response.status, name).toBe(409);
      const body = (await response.json()) as Refusal;
      expect(body.error.details[0]).toMatchObject({ path: "name", suggestion: `${name}_mcp` });
    }
  });
});

describe("titles of remote tools the server gives none", () => {
  type Listed = { tools: { id: string; title: string }[] };

  it("read the name as words, keep a server's own, and an unchanged refresh holds nothing", async () => {
    const created = await register(mcp("plain", plain.url));
    expect(created.status, await created.clone().text()).toBe(201);
    const titles = Object.fromEntries(
      ((await created.json()) as Listed).tools.map((tool) => [tool.id, tool.title]),
    );
    expect(titles).toEqual({
      create_issue: "Create issue",
      slack_list_channels: "Slack list channels",
      take_screenshot: "Screenshot (own title)",
    });
    const outcome = await refreshPlain();
    expect(outcome.held).toEqual({ added: [], changed: [], removed: [] });
    expect(outcome.diff.changed).toEqual([]);
    const review = await system.request("/v1/registered-toolsets/plain/review");
    expect(((await review.json()) as { pending: unknown[] }).pending).toEqual([]);
  });

  it("take a pin stored with the raw name as title (before this) to the new title, holding nothing", async () => {
    const { catalog } = system.toolbus.stores;
    const toolset = await catalog.getToolset("plain");
    if (!toolset) throw new Error("plain is not registered");
    const { tools } = await catalog.list({ toolset: "plain" });
    const strip = <T extends { revision?: number; updatedAt?: string }>(item: T) => {
      const { revision: _r, updatedAt: _u, ...rest } = item;
      return rest;
    };
    // As a registration stored before untitled tools got a title: the remote name.
    const legacy = tools.map((tool) =>
      tool.implementation.kind === "mcp" && tool.title !== "Screenshot (own title)"
        ? { ...strip(tool), title: tool.implementation.remoteName }
        : strip(tool),
    );
    await catalog.replaceToolset(strip(toolset), legacy);
    const stored = await (await system.request("/v1/tools/create_issue")).json();
    expect((stored as { title: string }).title).toBe("create_issue");

    const outcome = await refreshPlain();
    expect(outcome.held).toEqual({ added: [], changed: [], removed: [] });
    // The title changed, once, and is served at once.
    expect(outcome.diff.changed).toEqual(["create_issue", "slack_list_channels"]);
    const now = await (await system.request("/v1/tools/create_issue")).json();
    expect((now as { title: string }).title).toBe("Create issue");
  });
});

/** Refreshes the registered toolset `plain` (a 200), and what the refresh held and changed. */
async function refreshPlain() {
  const refreshed = await system.request("/v1/registered-toolsets/plain/refresh", {
    method: "POST",
  });
  expect(refreshed.status).toBe(200);
  return (await refreshed.json()) as {
    held: Record<string, string[]>;
    diff: Record<string, string[]>;
  };
}
