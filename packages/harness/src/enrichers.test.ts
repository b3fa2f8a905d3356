import { ValidationError } from "@toolbus/wire/errors";
import { describe, expect, it } from "vitest";
import type { Agent } from "./agent";
import {
  addMcpTools,
  addToolbusCatalog,
  compose,
  initialToolMap,
  stripMcpForHarness,
  type ToolMap,
} from "./enrichers";
import { mapTools } from "./mapping";
import { Tool, toolKey } from "./vocabulary";

const agent: Agent = {
  name: "reviewer",
  description: "Reviews code",
  prompt: "Review.",
  tools: [Tool.Read],
  tags: ["review", "web"],
};

const keys = (map: ToolMap) => map.tools.map(toolKey);

describe("enrichers", () => {
  it("start from the agent's own tools", () => {
    expect(initialToolMap(agent)).toEqual({
      allTools: false,
      tools: [Tool.Read],
      mcpServers: {},
      warnings: [],
    });
    expect(initialToolMap({ ...agent, tools: undefined }).allTools).toBe(true);
  });

  it("add MCP tools to every agent, or only to the named or tagged ones", () => {
    const start = initialToolMap(agent);
    const everyone = addMcpTools({ server: "gh", tools: ["issues"] });
    expect(keys(everyone("claude-code", agent, start))).toEqual(["Read", "mcp:gh/issues"]);

    const byName = addMcpTools({ server: "gh", tools: ["issues"], agents: ["writer"] });
    expect(byName("claude-code", agent, start)).toBe(start);
    expect(keys(byName("claude-code", { ...agent, name: "writer" }, start))).toContain(
      "mcp:gh/issues",
    );

    const byTag = addMcpTools({ server: "search", tools: ["find"], tags: ["web"] });
    expect(keys(byTag("opencode", agent, start))).toEqual(["Read", "mcp:search/find"]);
    expect(byTag("opencode", { ...agent, tags: ["other"] }, start)).toBe(start);
  });

  it("record the server configuration they are given", () => {
    const map = addMcpTools({
      server: "gh",
      tools: ["issues"],
      config: { command: "gh-mcp", args: ["--stdio"] },
    })("copilot", agent, initialToolMap(agent));
    expect(map.mcpServers).toEqual({ gh: { command: "gh-mcp", args: ["--stdio"] } });
  });

  it("reject bad MCP names when the enricher is made", () => {
    expect(() => addMcpTools({ server: "g h", tools: ["x"] })).toThrow(ValidationError);
  });

  it("strip MCP tools and servers only on the named harnesses, with a warning", () => {
    const add = addMcpTools({
      server: "gh",
      tools: ["issues"],
      config: { url: "https://gh.example/mcp" },
    });
    const map = add("copilot", agent, initialToolMap(agent));
    const strip = stripMcpForHarness(["copilot"]);
    const stripped = strip("copilot", agent, map);
    expect(keys(stripped)).toEqual(["Read"]);
    expect(stripped.mcpServers).toEqual({});
    expect(stripped.warnings).toEqual([
      "mcp:gh/issues was removed for GitHub Copilot (stripMcpForHarness).",
    ]);
    expect(strip("claude-code", agent, map)).toBe(map);
  });

  it("apply left to right, so order changes the result", () => {
    const add = addMcpTools({ server: "gh", tools: ["issues"] });
    const strip = stripMcpForHarness(["copilot"]);
    const start = initialToolMap(agent);
    const addThenStrip = compose([add, strip])("copilot", agent, start);
    const stripThenAdd = compose([strip, add])("copilot", agent, start);
    expect(mapTools("copilot", addThenStrip.tools).tools).toEqual(["read"]);
    expect(mapTools("copilot", stripThenAdd.tools).tools).toEqual(["read", "gh/issues"]);
    expect(compose([])("copilot", agent, start)).toBe(start);
  });

  it("never change the tool map they are given", () => {
    const start = initialToolMap(agent);
    const snapshot = structuredClone(start);
    compose([
      addMcpTools({ server: "gh", tools: ["issues"], config: { url: "https://gh.example/mcp" } }),
      stripMcpForHarness(["opencode"]),
    ])("opencode", agent, start);
    expect(start).toEqual(snapshot);
  });

  it("add the Toolbus catalog's tools as tools of its MCP server", () => {
    const map = addToolbusCatalog({
      url: "https://toolbus.example/mcp",
      tools: ["web_search", "readability_analyzer"],
    })("claude-code", agent, initialToolMap(agent));
    expect(keys(map)).toEqual([
      "Read",
      "mcp:toolbus/web_search",
      "mcp:toolbus/readability_analyzer",
    ]);
    expect(map.mcpServers).toEqual({
      toolbus: {
        url: "https://toolbus.example/mcp",
        envHeaders: {
          Authorization: { env: "TOOLBUS_API_KEY", prefix: "Bearer " },
          "x-toolbus-run-id": { env: "TOOLBUS_RUN_ID", optional: true },
        },
      },
    });
    expect(mapTools("claude-code", map.tools).tools).toContain("mcp__toolbus__web_search");

    const none = addToolbusCatalog({ url: "https://toolbus.example/mcp", tools: [] })(
      "claude-code",
      agent,
      initialToolMap(agent),
    );
    expect(keys(none)).toEqual(["Read"]);
    expect(none.warnings).toEqual([
      "No Toolbus catalog tools are available to this agent; none were added.",
    ]);
  });

  it("read the Toolbus API key and run id from the variables the caller names", () => {
    const map = addToolbusCatalog({
      url: "https://toolbus.example/mcp",
      tools: ["web_search"],
      apiKeyEnv: "TB_KEY",
      runIdEnv: "TB_RUN",
    })("copilot", agent, initialToolMap(agent));
    expect(map.mcpServers.toolbus).toEqual({
      url: "https://toolbus.example/mcp",
      envHeaders: {
        Authorization: { env: "TB_KEY", prefix: "Bearer " },
        "x-toolbus-run-id": { env: "TB_RUN", optional: true },
      },
    });
  });
});
