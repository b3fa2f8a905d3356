// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` here is the harnesses' own syntax for reading the environment, not a JavaScript template.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
let viewerKey: string;
let catalogIds: string[];

beforeAll(async () => {
  system = await startTestToolbus({
    config: { modes: { default: "default", available: ["default", "research"] } },
  });
  const created = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "reader", role: "viewer" },
  });
  viewerKey = ((await created.json()) as { key: string }).key;
  await registerTestTools();
  const listed = await system.request("/v1/tools");
  const { tools } = (await listed.json()) as {
    tools: { id: string; optionality: string; available: boolean }[];
  };
  catalogIds = tools.filter((t) => t.optionality === "optional" && t.available).map((t) => t.id);
});
afterAll(() => system.stop());

interface AgentFile {
  harness: string;
  path: string;
  content: string;
  warnings: string[];
  mcpServersFile?: { path: string; key: string; content: string };
}

const agent = {
  name: "reviewer",
  description: "Reviews code: finds bugs",
  prompt: "You review code.",
  tools: ["Read", "Grep", "Bash", "Todo", "custom:NotebookEdit", "mcp:github/get_issue"],
  model: "sonnet",
};

function renderRequest(body: unknown, key?: string) {
  return system.request("/v1/agents/render", {
    method: "POST",
    json: body,
    ...(key ? { key } : {}),
  });
}

function frontmatterOf(content: string): Record<string, unknown> {
  const match = /^---\n([\s\S]*?)\n---\n\n/.exec(content);
  expect(match).not.toBeNull();
  return parse(match?.[1] ?? "") as Record<string, unknown>;
}

async function expectBadRequest(body: unknown) {
  const response = await renderRequest(body);
  expect(response.status).toBe(400);
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack|ZodError/);
  const parsed = JSON.parse(text) as {
    error: { code: string; message: string; details?: { path: string; message: string }[] };
  };
  expect(parsed.error.code).toBe("invalid_request");
  return parsed.error;
}

describe("POST /v1/agents/render", () => {
  it("renders one harness's file", async () => {
    const response = await renderRequest({ harness: "claude-code", agent });
    expect(response.status).toBe(200);
    const file = (await response.json()) as AgentFile;
    expect(file.path).toBe(".claude/agents/reviewer.md");
    expect(frontmatterOf(file.content)).toEqual({
      name: "reviewer",
      description: "Reviews code: finds bugs",
      tools:
        "Read, Grep, Bash, TaskCreate, TaskUpdate, TaskList, TaskGet, NotebookEdit, mcp__github__get_issue",
      model: "sonnet",
    });
    expect(file.content.endsWith("\n\nYou review code.\n")).toBe(true);
    expect(file.warnings).toEqual([]);
  });

  it("renders every harness at once with what each dropped", async () => {
    const response = await renderRequest({
      harness: "all",
      agent: { ...agent, tools: [...agent.tools, "LSP"] },
    });
    expect(response.status).toBe(200);
    const { files } = (await response.json()) as { files: AgentFile[] };
    expect(files.map((f) => f.path)).toEqual([
      ".claude/agents/reviewer.md",
      ".opencode/agents/reviewer.md",
      ".github/agents/reviewer.agent.md",
    ]);
    const [claude, opencode, copilot] = files;
    expect(claude?.warnings).toEqual([]);
    const permission = frontmatterOf(opencode?.content ?? "").permission as Record<string, string>;
    expect(permission).toMatchObject({
      "*": "deny",
      read: "allow",
      bash: "allow",
      lsp: "allow",
      edit: "deny",
      NotebookEdit: "allow",
      github_get_issue: "allow",
    });
    expect(frontmatterOf(copilot?.content ?? "").tools).toEqual([
      "read",
      "search",
      "execute",
      "todo",
      "NotebookEdit",
      "github/get_issue",
    ]);
    expect(copilot?.warnings).toEqual(["LSP has no GitHub Copilot equivalent; it was dropped."]);
  });

  it("applies declarative enrichers left to right", async () => {
    const response = await renderRequest({
      harness: "copilot",
      agent: { ...agent, tools: ["Read"], tags: ["web"] },
      enrichers: [
        {
          type: "addMcpTools",
          server: "search",
          tools: ["find"],
          tags: ["web"],
          config: {
            url: "https://search.example/mcp",
            envHeaders: { Authorization: { env: "SEARCH_TOKEN", prefix: "Bearer " } },
          },
        },
        { type: "addMcpTools", server: "other", tools: ["x"], agents: ["someone-else"] },
      ],
    });
    expect(response.status).toBe(200);
    const file = (await response.json()) as AgentFile;
    const frontmatter = frontmatterOf(file.content);
    expect(frontmatter.tools).toEqual(["read", "search/find"]);
    expect(frontmatter["mcp-servers"]).toEqual({
      search: {
        type: "http",
        url: "https://search.example/mcp",
        headers: { Authorization: "Bearer ${COPILOT_MCP_SEARCH_TOKEN}" },
        tools: ["find"],
      },
    });

    const stripped = await renderRequest({
      harness: "copilot",
      agent: { ...agent, tools: ["Read"] },
      enrichers: [
        { type: "addMcpTools", server: "search", tools: ["find"] },
        { type: "stripMcpForHarness", harnesses: ["copilot"] },
      ],
    });
    const strippedFile = (await stripped.json()) as AgentFile;
    expect(frontmatterOf(strippedFile.content).tools).toEqual(["read"]);
    expect(strippedFile.warnings).toEqual([
      "mcp:search/find was removed for GitHub Copilot (stripMcpForHarness).",
    ]);
  });

  it("adds the catalog's available optional tools as tools of Toolbus's MCP server", async () => {
    expect(catalogIds.length).toBeGreaterThan(0);
    const response = await renderRequest({
      harness: "claude-code",
      agent: { ...agent, tools: ["Read"] },
      enrichers: [{ type: "addToolbusCatalog" }],
    });
    expect(response.status).toBe(200);
    const file = (await response.json()) as AgentFile;
    const frontmatter = frontmatterOf(file.content);
    expect(frontmatter.tools).toBe(
      ["Read", ...catalogIds.map((id) => `mcp__toolbus__${id}`)].join(", "),
    );
    expect(frontmatter.mcpServers).toEqual(["toolbus"]);
    expect(file.mcpServersFile?.path).toBe(".mcp.json");
    expect(JSON.parse(file.mcpServersFile?.content ?? "")).toEqual({
      mcpServers: {
        toolbus: {
          type: "http",
          url: "http://localhost/mcp",
          headers: {
            Authorization: "Bearer ${TOOLBUS_API_KEY}",
            "x-toolbus-run-id": "${TOOLBUS_RUN_ID:-}",
          },
        },
      },
    });
  });

  it("offers the search surface's two tools, whatever the catalog holds, when asked", async () => {
    const response = await renderRequest({
      harness: "claude-code",
      agent: { ...agent, tools: ["Read"] },
      enrichers: [{ type: "addToolbusCatalog", surface: "search" }],
    });
    expect(response.status).toBe(200);
    const file = (await response.json()) as AgentFile;
    expect(frontmatterOf(file.content).tools).toBe(
      "Read, mcp__toolbus__search_tools, mcp__toolbus__call_tool",
    );
    const servers = JSON.parse(file.mcpServersFile?.content ?? "") as {
      mcpServers: { toolbus: { url: string } };
    };
    expect(servers.mcpServers.toolbus.url).toBe("http://localhost/mcp?surface=search");

    const elsewhere = await renderRequest({
      harness: "copilot",
      agent: { ...agent, tools: [] },
      enrichers: [
        {
          type: "addToolbusCatalog",
          server: "tb",
          url: "https://tb.example/mcp?x=1",
          surface: "search",
        },
      ],
    });
    expect(elsewhere.status).toBe(200);
    const content = ((await elsewhere.json()) as AgentFile).content;
    expect(frontmatterOf(content).tools).toEqual(["tb/search_tools", "tb/call_tool"]);
    expect(content).toContain("https://tb.example/mcp?x=1&surface=search");
  });

  it("reads the API key and run id from the variables the request names", async () => {
    const response = await renderRequest({
      harness: "opencode",
      agent: { ...agent, tools: ["Read"] },
      enrichers: [{ type: "addToolbusCatalog", apiKeyEnv: "TB_KEY", runIdEnv: "TB_RUN" }],
    });
    expect(response.status).toBe(200);
    const file = (await response.json()) as AgentFile;
    expect(JSON.parse(file.mcpServersFile?.content ?? "")).toEqual({
      $schema: "https://opencode.ai/config.json",
      mcp: {
        toolbus: {
          type: "remote",
          url: "http://localhost/mcp",
          oauth: false,
          headers: { Authorization: "Bearer {env:TB_KEY}", "x-toolbus-run-id": "{env:TB_RUN}" },
        },
      },
    });
  });

  it("offers catalog tools by the agent's mode and role, never disabled or core ones", async () => {
    const offered = async (extra: Record<string, string>) => {
      const response = await renderRequest({
        harness: "copilot",
        agent: { ...agent, tools: [], ...extra },
        enrichers: [{ type: "addToolbusCatalog", server: "tb", url: "https://tb.example/mcp" }],
      });
      expect(response.status).toBe(200);
      const tools = frontmatterOf(((await response.json()) as AgentFile).content).tools as string[];
      return tools.filter((tool) => tool.startsWith("tb/agents_test_"));
    };
    expect(await offered({})).toEqual(["tb/agents_test_plain", "tb/agents_test_senior"]);
    expect(await offered({ mode: "research" })).toEqual([
      "tb/agents_test_plain",
      "tb/agents_test_research",
      "tb/agents_test_senior",
    ]);
    expect(await offered({ role: "viewer" })).toEqual(["tb/agents_test_plain"]);

    const unknownMode = await expectBadRequest({
      harness: "copilot",
      agent: { ...agent, mode: "turbo" },
      enrichers: [{ type: "addToolbusCatalog" }],
    });
    expect(unknownMode.message).toContain("turbo");
    await expectBadRequest({
      harness: "copilot",
      agent: { ...agent, role: "emperor" },
      enrichers: [{ type: "addToolbusCatalog" }],
    });
  });

  it("never lists for an agent the tools of a role above the caller's, as /v1/select does not", async () => {
    const above = await renderRequest(
      {
        harness: "claude-code",
        agent: { ...agent, role: "admin" },
        enrichers: [{ type: "addToolbusCatalog" }],
      },
      viewerKey,
    );
    expect(above.status).toBe(403);
    const own = await renderRequest(
      {
        harness: "claude-code",
        agent: { ...agent, role: "viewer" },
        enrichers: [{ type: "addToolbusCatalog" }],
      },
      viewerKey,
    );
    expect(own.status).toBe(200);
  });

  it("answers in JSON or YAML on request", async () => {
    const json = (await (
      await renderRequest({ harness: "opencode", agent, format: "json", opencodeTools: "legacy" })
    ).json()) as AgentFile;
    expect(json.path).toBe(".opencode/agents/reviewer.json");
    const parsed = JSON.parse(json.content) as Record<string, unknown>;
    expect(parsed.prompt).toBe("You review code.");
    expect(parsed.tools).toMatchObject({ read: true, bash: true, write: false });

    const yaml = (await (
      await renderRequest({ harness: "copilot", agent, format: "yaml", opencodeMode: "subagent" })
    ).json()) as AgentFile;
    expect(parse(yaml.content)).toMatchObject({ name: "reviewer", prompt: "You review code." });
  });

  it("needs only the read permission", async () => {
    const response = await renderRequest({ harness: "copilot", agent }, viewerKey);
    expect(response.status).toBe(200);
    const anonymous = await system.request("/v1/agents/render", {
      method: "POST",
      json: { harness: "copilot", agent },
      key: null,
    });
    expect(anonymous.status).toBe(401);
  });

  it("rejects an unknown harness", async () => {
    const error = await expectBadRequest({ harness: "cursor", agent });
    expect(JSON.stringify(error.details)).toContain("claude-code, opencode, copilot, all");
  });

  it("rejects an unknown universal tool with the valid names", async () => {
    const error = await expectBadRequest({
      harness: "claude-code",
      agent: { ...agent, tools: ["Read", "Teleport"] },
    });
    expect(error.details).toEqual([
      {
        path: "agent.tools.1",
        message: expect.stringMatching(/^Unknown tool "Teleport"\. Use one of Read, Write, Edit/),
      },
    ]);
    await expectBadRequest({ harness: "claude-code", agent: { ...agent, tools: ["custom:a b"] } });
    await expectBadRequest({ harness: "claude-code", agent: { ...agent, tools: ["mcp:nope"] } });
  });

  it("rejects malformed enricher specs", async () => {
    const unknown = await expectBadRequest({
      harness: "copilot",
      agent,
      enrichers: [{ type: "addEverything" }],
    });
    expect(JSON.stringify(unknown.details)).toContain(
      "addMcpTools, stripMcpForHarness or addToolbusCatalog",
    );
    for (const spec of [
      { type: "addMcpTools", server: "s" },
      { type: "addMcpTools", server: "bad server", tools: ["x"] },
      { type: "addMcpTools", server: "s", tools: ["x"], config: { url: "file:///etc/passwd" } },
      { type: "addMcpTools", server: "s", tools: ["x"], surprise: true },
      { type: "stripMcpForHarness", harnesses: ["cursor"] },
      { type: "addToolbusCatalog", url: "not a url" },
      { type: "addToolbusCatalog", apiKeyEnv: "1KEY" },
      { type: "addToolbusCatalog", runIdEnv: "RUN-ID" },
      {
        type: "addMcpTools",
        server: "s",
        tools: ["x"],
        config: { url: "https://s.example/mcp", envHeaders: { "Bad Header": { env: "A" } } },
      },
      {
        type: "addMcpTools",
        server: "s",
        tools: ["x"],
        config: { url: "https://s.example/mcp", envHeaders: { A: { env: "A", secret: true } } },
      },
      "addMcpTools",
    ]) {
      await expectBadRequest({ harness: "copilot", agent, enrichers: [spec] });
    }
  });

  it("rejects agent names that would leave the agents folder", async () => {
    for (const name of ["../x", "a/b", "a\\b", "", "..", ".claude", "a".repeat(65), "a b"]) {
      const error = await expectBadRequest({ harness: "all", agent: { ...agent, name } });
      expect(error.details?.[0]?.path).toBe("agent.name");
    }
  });

  it("rejects unknown fields and missing parts", async () => {
    await expectBadRequest({ harness: "copilot", agent: { ...agent, colour: "red" } });
    await expectBadRequest({ harness: "copilot", agent, extra: 1 });
    await expectBadRequest({ harness: "copilot" });
    await expectBadRequest({ harness: "copilot", agent: { ...agent, description: " " } });
    await expectBadRequest({ harness: "copilot", agent, format: "toml" });
  });
});

/** A toolset whose tools differ only in availability, registered through the admin API. */
async function registerTestTools() {
  const toolset = await system.request("/v1/toolsets/agents_test", {
    method: "PUT",
    json: { name: "agents_test", description: "Agent rendering tests", owner: "tests" },
  });
  expect(toolset.status).toBe(201);
  const variants: [string, Record<string, unknown>][] = [
    ["plain", {}],
    ["research", { availability: { enabled: true, modes: ["research"] } }],
    ["senior", { availability: { enabled: true, minRole: "member" } }],
    ["disabled", { availability: { enabled: false } }],
    ["core", { optionality: "core" }],
  ];
  for (const [suffix, extra] of variants) {
    const id = `agents_test_${suffix}`;
    const response = await system.request(`/v1/tools/${id}`, {
      method: "PUT",
      json: {
        id,
        toolset: "agents_test",
        title: `Test tool ${suffix}`,
        description: "A tool that exists to be offered or not.",
        category: "utility",
        usageHint: "Never; it is a test fixture.",
        inputSchema: { type: "object" },
        outputSchema: { type: "object" },
        ...extra,
      },
    });
    expect(response.status).toBe(201);
  }
}
