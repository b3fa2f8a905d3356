// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` here is the harnesses' own syntax for reading the environment, not a JavaScript template.

import { ValidationError } from "@toolbus/wire/errors";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Agent } from "../agent";
import { addMcpTools, stripMcpForHarness } from "../enrichers";
import { HARNESSES } from "../harness-table";
import { Tool } from "../vocabulary";
import { render, renderAll } from "./render";

/** Splits a Markdown agent file into its parsed frontmatter and its body. */
function readFile(content: string): { frontmatter: Record<string, unknown>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n\n([\s\S]*)$/.exec(content);
  if (!match) throw new Error(`not a frontmatter file:\n${content}`);
  return { frontmatter: parse(match[1] ?? "") as Record<string, unknown>, body: match[2] ?? "" };
}

const reviewer: Agent = {
  name: "reviewer",
  description: "Reviews code for bugs",
  prompt: "You review code.\n\nBe brief.",
  tools: [Tool.Read, Tool.Grep, Tool.Bash, Tool.Todo],
  model: "sonnet",
};

describe("rendering agent files", () => {
  it("writes Claude Code's file with a comma-separated tools list", () => {
    const file = render("claude-code", reviewer);
    expect(file.path).toBe(".claude/agents/reviewer.md");
    const { frontmatter, body } = readFile(file.content);
    expect(frontmatter).toEqual({
      name: "reviewer",
      description: "Reviews code for bugs",
      tools: "Read, Grep, Bash, TaskCreate, TaskUpdate, TaskList, TaskGet",
      model: "sonnet",
    });
    expect(body).toBe("You review code.\n\nBe brief.\n");
    expect(file.warnings).toEqual([]);
  });

  it("writes GitHub Copilot's file with a tools list", () => {
    const file = render("copilot", reviewer);
    expect(file.path).toBe(".github/agents/reviewer.agent.md");
    const { frontmatter } = readFile(file.content);
    expect(frontmatter).toEqual({
      name: "reviewer",
      description: "Reviews code for bugs",
      tools: ["read", "search", "execute", "todo"],
      model: "sonnet",
    });
  });

  it("writes OpenCode's file with a closed permission map by default", () => {
    const file = render("opencode", reviewer, { opencodeMode: "subagent" });
    expect(file.path).toBe(".opencode/agents/reviewer.md");
    const { frontmatter } = readFile(file.content);
    expect(frontmatter).not.toHaveProperty("name");
    expect(frontmatter).not.toHaveProperty("tools");
    expect(frontmatter.description).toBe("Reviews code for bugs");
    expect(frontmatter.mode).toBe("subagent");
    expect(frontmatter.model).toBe("sonnet");
    const permission = frontmatter.permission as Record<string, string>;
    expect(Object.keys(permission)[0]).toBe("*");
    expect(permission).toEqual({
      "*": "deny",
      read: "allow",
      edit: "deny",
      bash: "allow",
      glob: "deny",
      grep: "allow",
      list: "deny",
      lsp: "deny",
      skill: "deny",
      todowrite: "allow",
      todoread: "allow",
      webfetch: "deny",
      websearch: "deny",
      question: "deny",
      task: "deny",
    });
  });

  it("writes OpenCode's legacy tools map on request", () => {
    const { frontmatter } = readFile(
      render("opencode", reviewer, { opencodeTools: "legacy" }).content,
    );
    expect(frontmatter).not.toHaveProperty("permission");
    expect(frontmatter.tools).toMatchObject({
      read: true,
      write: false,
      edit: false,
      bash: true,
      grep: true,
      todowrite: true,
      todoread: true,
      task: false,
    });
  });

  it("says when one OpenCode permission key widens what was granted", () => {
    const file = render("opencode", { ...reviewer, tools: [Tool.Write] });
    expect((readFile(file.content).frontmatter.permission as Record<string, string>).edit).toBe(
      "allow",
    );
    expect(file.warnings).toEqual([
      `OpenCode's "edit" permission governs write and edit, so allowing it also allows edit; use opencodeTools: "legacy" to set them apart.`,
    ]);
  });

  it("omits the tools field only when the agent gets every tool", () => {
    const everything = { ...reviewer, tools: undefined };
    expect(readFile(render("claude-code", everything).content).frontmatter).not.toHaveProperty(
      "tools",
    );
    expect(readFile(render("copilot", everything).content).frontmatter).not.toHaveProperty("tools");
    const opencode = readFile(render("opencode", everything).content).frontmatter;
    expect(opencode).not.toHaveProperty("permission");
    expect(opencode).not.toHaveProperty("tools");
  });

  it("writes an empty list, never nothing, when no listed tool survives", () => {
    const lspOnly = { ...reviewer, tools: [Tool.LSP] };
    const copilot = render("copilot", lspOnly);
    expect(readFile(copilot.content).frontmatter.tools).toEqual([]);
    expect(copilot.warnings).toContain("The agent has no GitHub Copilot tools left.");
    const none = { ...reviewer, tools: [] };
    expect(readFile(render("claude-code", none).content).frontmatter.tools).toEqual([]);
  });

  it("expresses disallowedTools on an every-tool agent where the harness can", () => {
    const agent = { ...reviewer, tools: undefined, disallowedTools: ["Shell", "Write"] };
    expect(readFile(render("claude-code", agent).content).frontmatter.disallowedTools).toBe(
      "Bash, Write",
    );
    expect(readFile(render("opencode", agent).content).frontmatter.permission).toEqual({
      bash: "deny",
      edit: "deny",
    });
    expect(
      readFile(render("opencode", agent, { opencodeTools: "legacy" }).content).frontmatter.tools,
    ).toEqual({ bash: false, write: false });
    const copilot = render("copilot", agent);
    expect(readFile(copilot.content).frontmatter).not.toHaveProperty("tools");
    expect(copilot.warnings[0]).toMatch(/no deny list/);
  });

  it("puts MCP servers in the file each harness reads them from", () => {
    const enrichers = [
      addMcpTools({
        server: "toolbus",
        tools: ["web_search"],
        config: { url: "https://tb.example/mcp" },
      }),
      addMcpTools({
        server: "gh",
        tools: ["issues"],
        config: { command: "gh-mcp", env: { A: "1" } },
      }),
    ];
    const claudeFile = render("claude-code", reviewer, { enrichers });
    const claude = readFile(claudeFile.content).frontmatter;
    expect(claude.tools).toContain("mcp__toolbus__web_search");
    expect(claude.mcpServers).toEqual(["toolbus", "gh"]);
    expect(claudeFile.mcpServersFile?.path).toBe(".mcp.json");
    expect(claudeFile.mcpServersFile?.key).toBe("mcpServers");
    expect(JSON.parse(claudeFile.mcpServersFile?.content ?? "")).toEqual({
      mcpServers: {
        toolbus: { type: "http", url: "https://tb.example/mcp" },
        gh: { type: "stdio", command: "gh-mcp", env: { A: "1" } },
      },
    });

    const copilotFile = render("copilot", reviewer, { enrichers });
    const copilot = readFile(copilotFile.content).frontmatter;
    expect(copilot.tools).toEqual([
      "read",
      "search",
      "execute",
      "todo",
      "toolbus/web_search",
      "gh/issues",
    ]);
    expect(copilot["mcp-servers"]).toEqual({
      toolbus: { type: "http", url: "https://tb.example/mcp", tools: ["web_search"] },
      gh: { type: "local", command: "gh-mcp", args: [], env: { A: "1" }, tools: ["issues"] },
    });
    expect(copilotFile).not.toHaveProperty("mcpServersFile");

    const opencodeFile = render("opencode", reviewer, { enrichers });
    const permission = readFile(opencodeFile.content).frontmatter.permission as Record<
      string,
      string
    >;
    expect(permission.toolbus_web_search).toBe("allow");
    expect(permission.gh_issues).toBe("allow");
    expect(opencodeFile.mcpServersFile?.path).toBe("opencode.json");
    expect(JSON.parse(opencodeFile.mcpServersFile?.content ?? "")).toEqual({
      $schema: "https://opencode.ai/config.json",
      mcp: {
        toolbus: { type: "remote", url: "https://tb.example/mcp" },
        gh: { type: "local", command: ["gh-mcp"], environment: { A: "1" } },
      },
    });
  });

  it("writes headers read from the environment in each harness's own syntax", () => {
    const enrichers = addMcpTools({
      server: "search",
      tools: ["find"],
      config: {
        url: "https://search.example/mcp",
        headers: { "X-Team": "docs" },
        envHeaders: {
          Authorization: { env: "SEARCH_TOKEN", prefix: "Bearer " },
          "X-Session": { env: "SEARCH_SESSION", optional: true },
        },
      },
    });
    const serverOf = (harness: "claude-code" | "opencode", key: string) => {
      const file = render(harness, reviewer, { enrichers }).mcpServersFile;
      return (JSON.parse(file?.content ?? "") as Record<string, Record<string, unknown>>)[key]
        ?.search as Record<string, unknown>;
    };
    expect(serverOf("claude-code", "mcpServers").headers).toEqual({
      "X-Team": "docs",
      Authorization: "Bearer ${SEARCH_TOKEN}",
      "X-Session": "${SEARCH_SESSION:-}",
    });
    const opencode = serverOf("opencode", "mcp");
    expect(opencode.headers).toEqual({
      "X-Team": "docs",
      Authorization: "Bearer {env:SEARCH_TOKEN}",
      "X-Session": "{env:SEARCH_SESSION}",
    });
    expect(opencode.oauth).toBe(false);

    const copilotFile = render("copilot", reviewer, { enrichers });
    const copilot = readFile(copilotFile.content).frontmatter["mcp-servers"] as Record<
      string,
      Record<string, unknown>
    >;
    expect(copilot.search?.headers).toEqual({
      "X-Team": "docs",
      Authorization: "Bearer ${COPILOT_MCP_SEARCH_TOKEN}",
      "X-Session": "${COPILOT_MCP_SEARCH_SESSION:-}",
    });
    expect(copilotFile.warnings).toContain(
      "GitHub Copilot reads only variables named COPILOT_MCP_…, so the file reads SEARCH_TOKEN → COPILOT_MCP_SEARCH_TOKEN, SEARCH_SESSION → COPILOT_MCP_SEARCH_SESSION: set those (for the cloud agent, as Agents secrets or variables).",
    );
    const prefixed = addMcpTools({
      server: "search",
      tools: ["find"],
      config: {
        url: "https://search.example/mcp",
        envHeaders: { Authorization: { env: "COPILOT_MCP_TOKEN" } },
      },
    });
    const once = render("copilot", reviewer, { enrichers: prefixed });
    expect(once.content).toContain("Authorization: ${COPILOT_MCP_TOKEN}");
    expect(once.warnings.join("\n")).not.toContain("reads only variables");
  });

  it("runs a single enricher or a list, left to right", () => {
    const add = addMcpTools({ server: "gh", tools: ["issues"] });
    const strip = stripMcpForHarness(["claude-code"]);
    const stripped = render("claude-code", reviewer, { enrichers: [add, strip] });
    expect(readFile(stripped.content).frontmatter.tools).not.toContain("mcp__gh__issues");
    expect(stripped.warnings).toContain(
      "mcp:gh/issues was removed for Claude Code (stripMcpForHarness).",
    );
    const kept = render("claude-code", reviewer, { enrichers: [strip, add] });
    expect(readFile(kept.content).frontmatter.tools).toContain("mcp__gh__issues");
    expect(
      readFile(render("claude-code", reviewer, { enrichers: add }).content).frontmatter.tools,
    ).toContain("mcp__gh__issues");
  });

  it("writes names and descriptions a YAML parser reads back unchanged", () => {
    const awkward = [
      "key: value, with: colons",
      `"double" and 'single' quotes`,
      "line one\nline two\n  indented: three",
      "# not a comment",
      "émoji 🚀, 中文, Ünïcödé, \u00a0nbsp",
      "- looks like a list",
      "yes",
      "null",
      "123",
      "[not, a, list]",
      "{ not: a map }",
      "trailing space ",
      "---",
      "@at & *star !bang %pct `tick` |pipe >gt",
    ];
    for (const description of awkward) {
      for (const harness of HARNESSES) {
        const file = render(harness, { ...reviewer, description, model: description });
        const { frontmatter, body } = readFile(file.content);
        expect(frontmatter.description, `${harness}: ${JSON.stringify(description)}`).toBe(
          description,
        );
        expect(frontmatter.model).toBe(description);
        expect(body).toBe(`${reviewer.prompt}\n`);
      }
    }
  });

  it("keeps a body that contains frontmatter fences as body", () => {
    const prompt = "---\nname: evil\n---\nStill the body.";
    const { frontmatter, body } = readFile(render("claude-code", { ...reviewer, prompt }).content);
    expect(frontmatter.name).toBe("reviewer");
    expect(body).toBe(`${prompt}\n`);
  });

  it("refuses names that could leave the agents folder", () => {
    for (const name of [
      "../x",
      "a/b",
      "a\\b",
      "",
      ".hidden",
      "..",
      "a".repeat(65),
      "a b",
      "x\n",
      "/abs",
    ]) {
      expect(() => render("claude-code", { ...reviewer, name }), JSON.stringify(name)).toThrow(
        ValidationError,
      );
    }
    expect(render("claude-code", { ...reviewer, name: `A${"b".repeat(63)}` }).path).toBe(
      `.claude/agents/A${"b".repeat(63)}.md`,
    );
    expect(() => render("copilot", { ...reviewer, description: "  " })).toThrow(ValidationError);
  });

  it("writes JSON and YAML forms with the body as prompt", () => {
    const json = render("copilot", reviewer, { format: "json" });
    expect(json.path).toBe(".github/agents/reviewer.agent.json");
    expect(JSON.parse(json.content)).toEqual({
      name: "reviewer",
      description: "Reviews code for bugs",
      tools: ["read", "search", "execute", "todo"],
      model: "sonnet",
      prompt: reviewer.prompt,
    });
    const yaml = render("claude-code", reviewer, { format: "yaml" });
    expect(yaml.path).toBe(".claude/agents/reviewer.yaml");
    expect(parse(yaml.content)).toMatchObject({ name: "reviewer", prompt: reviewer.prompt });
  });

  it("is deterministic, and renders every harness at once in a fixed order", () => {
    expect(render("opencode", reviewer)).toEqual(render("opencode", reviewer));
    const files = renderAll(reviewer);
    expect(files.map((file) => file.harness)).toEqual(["claude-code", "opencode", "copilot"]);
    expect(files.map((file) => file.path)).toEqual([
      ".claude/agents/reviewer.md",
      ".opencode/agents/reviewer.md",
      ".github/agents/reviewer.agent.md",
    ]);
  });

  it("warns when a prompt is longer than GitHub Copilot reads", () => {
    const file = render("copilot", { ...reviewer, prompt: "x".repeat(30_001) });
    expect(file.warnings).toContain(
      "The prompt is 30001 characters; GitHub Copilot reads at most 30000.",
    );
  });
});
