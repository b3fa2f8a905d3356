import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type McpUpstream,
  type RemoteToolFixture,
  startMcpUpstream,
  textTool,
} from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// A team's own MCP server (the official SDK on loopback) registered as a toolset.
const forecast: RemoteToolFixture = {
  tool: {
    name: "getForecast",
    description: "Tomorrow's forecast for a city. Celsius.",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string", minLength: 1 } },
      required: ["city"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: { city: { type: "string" }, tempC: { type: "number" } },
      required: ["city", "tempC"],
    },
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  run: (args) => ({
    content: [{ type: "text", text: `${args.city}: 21 C` }],
    structuredContent: { city: String(args.city), tempC: 21 },
  }),
};
const search = textTool(
  "search",
  "Searches weather stations.",
  (args) => `station near ${args.q}`,
  { q: { type: "string" } },
);
const explode: RemoteToolFixture = {
  ...textTool("explode", "Always fails.", "city not found"),
  run: () => ({ content: [{ type: "text", text: "city not found" }], isError: true }),
};
const alerts = textTool("alerts", "Active weather alerts.", "none");

let server: McpUpstream;
let system: TestToolbus;

function registration(overrides: Record<string, unknown> = {}) {
  return {
    kind: "mcp",
    name: "weather",
    description: "The weather team's MCP server",
    owner: "team-weather",
    url: server.url,
    auth: { header: "Authorization", secret: "TOOLSET_WEATHER_TOKEN", prefix: "Bearer " },
    renames: { search: "weather_search" },
    defaults: { category: "research", timeoutMs: 5_000 },
    // This file is about refreshes that serve what the server lists; holding changes for
    // review (the default) is registered-review.test.ts's.
    updates: "follow",
    ...overrides,
  };
}

async function register(body: unknown) {
  return system.request(`/v1/registered-toolsets/${(body as { name: string }).name}`, {
    method: "PUT",
    json: body,
  });
}

type Call = {
  status: string;
  result: {
    data: unknown;
    output: string;
    failure?: { kind: string; message: string; retryable: boolean };
  };
};

async function call(tool: string, input: unknown, runId = system.runId()) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool, input, wait: 10 },
  });
  return { response, body: (await response.json()) as Call };
}

beforeAll(async () => {
  server = await startMcpUpstream([forecast, search, explode], {
    requiredHeader: { name: "authorization", value: "Bearer w-token" },
  });
  system = await startTestToolbus({
    config: { outbound: { allowHosts: ["127.0.0.1"] } },
    secrets: { TOOLSET_WEATHER_TOKEN: "w-token", TOOLSET_OTHER_TOKEN: "wrong" },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await server?.close();
});

describe("a remote MCP server registered as a toolset", () => {
  it("is listed once at registration and its tools are stored under the toolset", async () => {
    const response = await register(registration());
    expect(response.status).toBe(201);
    const body = (await response.json()) as {
      tools: { id: string; category: string; annotations: Record<string, boolean> }[];
      diff: { added: string[] };
    };
    expect(body.diff.added).toEqual(["explode", "get_forecast", "weather_search"]);
    const get = body.tools.find((tool) => tool.id === "get_forecast");
    expect(get).toMatchObject({
      category: "research",
      annotations: { readOnly: true, openWorld: true, idempotent: false },
    });
    // The server saw the secret's value in the header it was registered with.
    expect(server.headers.at(-1)?.authorization).toBe("Bearer w-token");
    expect(JSON.stringify(body)).not.toContain("w-token");
  });

  it("runs a tool over REST: structured content becomes data, and both events land on the run", async () => {
    const runId = system.runId();
    const { response, body } = await call("get_forecast", { city: "Oslo" }, runId);
    expect(response.status).toBe(200);
    expect(body).toMatchObject({
      status: "succeeded",
      result: { data: { city: "Oslo", tempC: 21 }, output: "Oslo: 21 C" },
    });
    expect(server.calls.at(-1)).toBe("getForecast");
    const events = await system.events(runId);
    expect(events.map((event) => [event.detailType, event.detail.toolset])).toEqual([
      ["ToolCallScheduled", "weather"],
      ["ToolResultReceived", "weather"],
    ]);
    expect(events[0]?.detail).toMatchObject({ implementation: "mcp", toolId: "get_forecast" });
  });

  it("calls a renamed tool by its remote name, keeping its content blocks as they came", async () => {
    const { body } = await call("weather_search", { q: "Bergen" });
    expect(body).toMatchObject({
      status: "succeeded",
      result: {
        output: "station near Bergen",
        data: null,
        content: [{ type: "text", text: "station near Bergen" }],
      },
    });
    expect(server.calls.at(-1)).toBe("search");
  });

  it("turns a remote isError result into a failed result with the server's words", async () => {
    const { body } = await call("explode", {});
    expect(body.status).toBe("failed");
    expect(body.result.failure).toMatchObject({ kind: "upstream_error" });
    expect(body.result.failure?.message).toContain("city not found");
  });

  it("validates input against the remote tool's JSON Schema before scheduling", async () => {
    const runId = system.runId();
    const { response } = await call("get_forecast", { town: "Oslo" }, runId);
    expect(response.status).toBe(400);
    expect(await system.events(runId)).toEqual([]);
  });

  it("is offered on /mcp like a built-in tool, and callable there", async () => {
    const api: ApiServer = await serveApi(system.app, { port: 0 });
    const client = new Client({ name: "test", version: "1" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${system.adminKey}` } },
        }),
      );
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(["get_forecast", "weather_search"]),
      );
      const result = await client.callTool({ name: "get_forecast", arguments: { city: "Rome" } });
      expect(result.structuredContent).toEqual({ city: "Rome", tempC: 21 });
    } finally {
      await client.close();
      await api.close();
    }
  });

  it("is added to agent files by the catalog enricher, named as Toolbus's MCP tools", async () => {
    const response = await system.request("/v1/agents/render", {
      method: "POST",
      json: {
        harness: "claude-code",
        agent: { name: "forecaster", description: "Plans trips", prompt: "Plan.", tools: ["Read"] },
        enrichers: [{ type: "addToolbusCatalog" }],
      },
    });
    expect(response.status).toBe(200);
    const { content } = (await response.json()) as { content: string };
    expect(content).toContain("mcp__toolbus__get_forecast");
    expect(content).toContain("mcp__toolbus__weather_search");
  });

  it("answers a refresh with what the server added, removed and changed", async () => {
    server.setTools([
      { ...forecast, tool: { ...forecast.tool, description: "Forecast for a city, in Celsius." } },
      search,
      alerts,
    ]);
    const response = await system.request("/v1/registered-toolsets/weather/refresh", {
      method: "POST",
    });
    expect(response.status).toBe(200);
    const { diff } = (await response.json()) as { diff: Record<string, string[]> };
    expect(diff).toEqual({
      added: ["alerts"],
      removed: ["explode"],
      changed: ["get_forecast"],
      unchanged: ["weather_search"],
    });
    expect((await system.request("/v1/tools/explode")).status).toBe(404);
    expect((await call("alerts", {})).body.status).toBe("succeeded");
  });

  it("keeps an administrator's disable across a refresh", async () => {
    expect((await system.request("/v1/tools/alerts/disable", { method: "POST" })).status).toBe(200);
    const response = await system.request("/v1/registered-toolsets/weather/refresh", {
      method: "POST",
    });
    const { diff } = (await response.json()) as { diff: Record<string, string[]> };
    expect(diff.changed).toEqual([]);
    const tool = (await (await system.request("/v1/tools/alerts")).json()) as {
      availability: { enabled: boolean };
    };
    expect(tool.availability.enabled).toBe(false);
  });

  it("refuses to register a server that rejects the stage's credentials", async () => {
    // The server now wants another token than the one the registration names.
    const stranger = await startMcpUpstream([forecast], {
      requiredHeader: { name: "authorization", value: "Bearer other" },
    });
    try {
      const refused = await register(
        registration({
          name: "weather_c",
          url: stranger.url,
          renames: { getForecast: "c_forecast" },
        }),
      );
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /could not be listed.*credentials/,
      );
    } finally {
      await stranger.close();
    }
  });
});

describe("a registered MCP server that goes away", () => {
  it("fails its calls as upstream_error, retryable, without breaking the run", async () => {
    const fleeting = await startMcpUpstream([forecast]);
    const registered = await register(
      registration({
        name: "fleeting",
        url: fleeting.url,
        auth: undefined,
        renames: { getForecast: "fleeting_forecast" },
      }),
    );
    expect(registered.status).toBe(201);
    await fleeting.close();
    const runId = system.runId();
    const { response, body } = await call("fleeting_forecast", { city: "Oslo" }, runId);
    expect(response.status).toBe(200);
    expect(body.status).toBe("failed");
    expect(body.result.failure).toMatchObject({ kind: "upstream_error", retryable: true });
    expect((await system.events(runId)).map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });
});

describe("a bad MCP registration", () => {
  async function refused(body: unknown) {
    const before = (await (await system.request("/v1/tools")).json()) as { tools: unknown[] };
    const response = await register(body);
    const message = ((await response.json()) as { error: { message: string } }).error.message;
    expect(response.status).toBe(400);
    const after = (await (await system.request("/v1/tools")).json()) as { tools: unknown[] };
    expect(after.tools).toEqual(before.tools);
    return message;
  }

  it("is refused when nothing answers at the URL", async () => {
    const gone = await startMcpUpstream([forecast]);
    const url = gone.url;
    await gone.close();
    const message = await refused(registration({ name: "gone", url, renames: {} }));
    expect(message).toMatch(/could not be listed/);
  });

  it("is refused when a remote tool's id is taken, naming both owners and the remedy", async () => {
    const message = await refused(registration({ name: "weather_twin", renames: {} }));
    expect(message).toMatch(
      /get_forecast is already registered by toolset weather \(owner team-weather\)/,
    );
    expect(message).toMatch(/renames/);
  });

  it("is refused when a remote tool publishes a broken schema", async () => {
    const broken = await startMcpUpstream([
      {
        ...alerts,
        tool: {
          ...alerts.tool,
          name: "brokenTool",
          inputSchema: { type: "object", properties: { x: { type: 5 } } },
        },
      },
    ]);
    try {
      const message = await refused(
        registration({ name: "broken", url: broken.url, auth: undefined, renames: {} }),
      );
      expect(message).toMatch(/broken_tool|brokenTool/);
    } finally {
      await broken.close();
    }
  });

  it("is refused for a private address that is not allow-listed", async () => {
    const message = await refused(
      registration({ name: "internal", url: "http://192.168.4.2/mcp" }),
    );
    expect(message).toMatch(/may not reach/);
  });
});

describe("removing an MCP toolset", () => {
  it("takes every tool out of the catalog and out of /v1/tools", async () => {
    const response = await system.request("/v1/registered-toolsets/weather", { method: "DELETE" });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { removed: string[] }).removed).toEqual([
      "alerts",
      "get_forecast",
      "weather_search",
    ]);
    const list = (await (await system.request("/v1/tools")).json()) as { tools: { id: string }[] };
    expect(list.tools.map((tool) => tool.id)).not.toContain("get_forecast");
  });
});
