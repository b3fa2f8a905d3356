import { httpToolsetRegistration, mcpToolsetRegistration } from "@toolbus/wire/model/registered";
import { toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { diffTools, httpToolsetPlan, humanTitle, mcpToolsetPlan, snakeCase } from "./plan";

const remote = (name: string, description = "Does a thing.") => ({
  name,
  description,
  inputSchema: { type: "object" as const, properties: {} },
});

const mcpServer = () =>
  mcpToolsetRegistration.parse({
    kind: "mcp",
    name: "srv",
    description: "d",
    owner: "o",
    url: "https://mcp.example/mcp",
  });

describe("planning a registration", () => {
  it("snake-cases remote names into ids, or gives up when none fits", () => {
    expect(
      ["getWeather", "get-weather", "Get Weather", "HTTPStatus", "9lives", "!!"].map(snakeCase),
    ).toEqual(["get_weather", "get_weather", "get_weather", "httpstatus", "", ""]);
  });

  it("reads a remote name as a title when the server gives none, and keeps the server's own", () => {
    expect(
      [
        "create_issue",
        "browser_take_screenshot",
        "slackListChannels",
        "get-weather",
        "HTTPStatus",
        "getURL",
        "list_allowed_directories",
        "!!",
      ].map(humanTitle),
    ).toEqual([
      "Create issue",
      "Browser take screenshot",
      "Slack list channels",
      "Get weather",
      "HTTP status",
      "Get URL",
      "List allowed directories",
      "!!",
    ]);
    const registration = mcpServer();
    const titles = mcpToolsetPlan(registration, [
      remote("create_issue"),
      { ...remote("search_code"), title: "Search code (GitHub)" },
      { ...remote("take_screenshot"), annotations: { title: "Screenshot" } },
    ]).tools.map((tool) => tool.title);
    expect(titles).toEqual(["Create issue", "Search code (GitHub)", "Screenshot"]);
  });

  it("versions an MCP tool by its remote definition, so a changed tool misses the old cache", () => {
    const registration = mcpServer();
    const [before] = mcpToolsetPlan(registration, [remote("look")]).tools;
    const [same] = mcpToolsetPlan(registration, [remote("look")]).tools;
    const [after] = mcpToolsetPlan(registration, [remote("look", "Does it better.")]).tools;
    expect(same?.version).toBe(before?.version);
    expect(after?.version).not.toBe(before?.version);
  });

  it("refuses two remote tools that would share one id", () => {
    const registration = mcpServer();
    expect(() => mcpToolsetPlan(registration, [remote("getX"), remote("get-x")])).toThrow(
      /would both be get_x/,
    );
  });

  it("requires path placeholders to be required input fields", () => {
    const registration = httpToolsetRegistration.parse({
      kind: "http",
      name: "api",
      description: "d",
      owner: "o",
      tools: [
        {
          id: "get_thing",
          title: "t",
          description: "d",
          category: "utility",
          usageHint: "u",
          url: "https://api.example/things/{id}",
          inputSchema: { type: "object", properties: { id: { type: "string" } } },
        },
      ],
    });
    expect(() => httpToolsetPlan(registration)).toThrow(/must list it as required/);
  });

  it("diffs by tool id, ignoring stored revisions", () => {
    const tool = (id: string, description = "d") =>
      toolSpec.parse({
        id,
        toolset: "s",
        title: "t",
        description,
        category: "utility",
        usageHint: "u",
        inputSchema: {},
        outputSchema: {},
      });
    const before = [{ ...tool("kept"), revision: 3, updatedAt: "x" }, tool("gone"), tool("edited")];
    expect(diffTools(before, [tool("kept"), tool("edited", "new"), tool("fresh")])).toEqual({
      added: ["fresh"],
      removed: ["gone"],
      changed: ["edited"],
      unchanged: ["kept"],
    });
  });
});
