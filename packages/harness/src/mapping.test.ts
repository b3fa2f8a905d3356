import { describe, expect, it } from "vitest";
import { HARNESS_TABLE, HARNESSES, type Harness, TABLE_TOOLS } from "./harness-table";
import { mapTools, mcpToolName } from "./mapping";
import { Tool, type UniversalTool } from "./vocabulary";

// Written out by hand from the design's harness table and the vendors' documentation, not derived from
// HARNESS_TABLE, so a wrong edit to the data file fails here.
const EXPECTED: Record<string, Record<Harness, string[]>> = {
  Read: { "claude-code": ["Read"], opencode: ["read"], copilot: ["read"] },
  Write: { "claude-code": ["Write"], opencode: ["write"], copilot: ["edit"] },
  Edit: { "claude-code": ["Edit"], opencode: ["edit"], copilot: ["edit"] },
  Shell: { "claude-code": ["Bash"], opencode: ["bash"], copilot: ["execute"] },
  Glob: { "claude-code": ["Glob"], opencode: ["glob"], copilot: ["search"] },
  Grep: { "claude-code": ["Grep"], opencode: ["grep"], copilot: ["search"] },
  List: { "claude-code": ["Glob"], opencode: ["list"], copilot: ["search"] },
  LSP: { "claude-code": ["LSP"], opencode: ["lsp"], copilot: [] },
  Skill: { "claude-code": ["Skill"], opencode: ["skill"], copilot: [] },
  TodoWrite: {
    "claude-code": ["TaskCreate", "TaskUpdate"],
    opencode: ["todowrite"],
    copilot: ["todo"],
  },
  TodoRead: {
    "claude-code": ["TaskList", "TaskGet", "TaskUpdate"],
    opencode: ["todoread"],
    copilot: ["todo"],
  },
  WebFetch: { "claude-code": ["WebFetch"], opencode: ["webfetch"], copilot: ["web"] },
  WebSearch: { "claude-code": ["WebSearch"], opencode: ["websearch"], copilot: ["web"] },
  Question: { "claude-code": ["AskUserQuestion"], opencode: ["question"], copilot: [] },
  Subagent: { "claude-code": ["Agent"], opencode: ["task"], copilot: ["agent"] },
};

const TITLES: Record<Harness, string> = {
  "claude-code": "Claude Code",
  opencode: "OpenCode",
  copilot: "GitHub Copilot",
};

describe("the harness table", () => {
  it("covers exactly the universal tools, and names the date and sources it follows", () => {
    expect(Object.keys(HARNESS_TABLE.tools).sort()).toEqual(Object.keys(EXPECTED).sort());
    expect(HARNESS_TABLE.verifiedOn).toBe("2026-11-21");
    for (const harness of HARNESSES) {
      expect(HARNESS_TABLE.sources[harness].length).toBeGreaterThan(0);
      for (const source of HARNESS_TABLE.sources[harness])
        expect(source.url).toMatch(/^https:\/\//);
    }
  });
});

describe("mapping universal tools to a harness", () => {
  for (const tool of TABLE_TOOLS) {
    for (const harness of HARNESSES) {
      const expected = EXPECTED[tool]?.[harness] ?? ["(missing expectation)"];
      it(`maps ${tool} on ${harness} to ${expected.join(", ") || "nothing"}`, () => {
        const result = mapTools(harness, [{ kind: "builtin", name: tool }]);
        expect(result.tools).toEqual(expected);
        if (expected.length === 0) {
          expect(result.warnings).toEqual([
            `${tool} has no ${TITLES[harness]} equivalent; it was dropped.`,
          ]);
        } else {
          expect(result.warnings).toEqual([]);
        }
      });
    }
  }

  it("gives TodoWrite + TodoRead on Claude Code each Task tool once, in first-seen order", () => {
    expect(mapTools("claude-code", [Tool.TodoWrite, Tool.TodoRead]).tools).toEqual([
      "TaskCreate",
      "TaskUpdate",
      "TaskList",
      "TaskGet",
    ]);
  });

  it("expands Todo to TodoWrite + TodoRead", () => {
    expect(mapTools("claude-code", [Tool.Todo]).tools).toEqual(
      mapTools("claude-code", [Tool.TodoWrite, Tool.TodoRead]).tools,
    );
    expect(mapTools("opencode", [Tool.Todo]).tools).toEqual(["todowrite", "todoread"]);
    expect(mapTools("copilot", [Tool.Todo]).tools).toEqual(["todo"]);
  });

  it("maps Bash like Shell", () => {
    for (const harness of HARNESSES) {
      expect(mapTools(harness, [Tool.Bash])).toEqual(mapTools(harness, [Tool.Shell]));
    }
  });

  it("collapses tools that share a native name, keeping the first position", () => {
    expect(
      mapTools("copilot", [Tool.Read, Tool.Glob, Tool.Grep, Tool.List, Tool.Edit, Tool.Write])
        .tools,
    ).toEqual(["read", "search", "edit"]);
    expect(mapTools("claude-code", [Tool.List, Tool.Read, Tool.Glob]).tools).toEqual([
      "Glob",
      "Read",
    ]);
  });

  it("drops tools a harness lacks, warning once per tool and naming the harness", () => {
    const result = mapTools("copilot", [Tool.Read, Tool.LSP, Tool.Question, Tool.LSP, Tool.Skill]);
    expect(result.tools).toEqual(["read"]);
    expect(result.warnings).toEqual([
      "LSP has no GitHub Copilot equivalent; it was dropped.",
      "Question has no GitHub Copilot equivalent; it was dropped.",
      "Skill has no GitHub Copilot equivalent; it was dropped.",
    ]);
  });

  it("passes custom names through on every harness", () => {
    for (const harness of HARNESSES) {
      expect(mapTools(harness, [Tool.custom("NotebookEdit"), Tool.Read]).tools[0]).toBe(
        "NotebookEdit",
      );
    }
  });

  it("names MCP tools the way each harness does", () => {
    const tools: UniversalTool[] = [Tool.mcp("toolbus", "web_search")];
    expect(mapTools("claude-code", tools).tools).toEqual(["mcp__toolbus__web_search"]);
    expect(mapTools("opencode", tools).tools).toEqual(["toolbus_web_search"]);
    expect(mapTools("copilot", tools).tools).toEqual(["toolbus/web_search"]);
    expect(mcpToolName("claude-code", "a-b", "c.d")).toBe("mcp__a-b__c.d");
  });

  it("removes disallowed tools after mapping, by universal or native name", () => {
    const tools = [Tool.Read, Tool.Todo, Tool.Shell];
    // Universal: everything TodoRead maps to goes, including TaskUpdate that TodoWrite also gave.
    expect(mapTools("claude-code", tools, { disallowedTools: [Tool.TodoRead] }).tools).toEqual([
      "Read",
      "TaskCreate",
      "Bash",
    ]);
    // Native: only that name goes.
    expect(mapTools("claude-code", tools, { disallowedTools: ["TaskUpdate"] }).tools).toEqual([
      "Read",
      "TaskCreate",
      "TaskList",
      "TaskGet",
      "Bash",
    ]);
    // Universal strings and aliases work too; Write disallowed on Copilot removes the shared edit.
    expect(mapTools("opencode", tools, { disallowedTools: ["Bash"] }).tools).toEqual([
      "read",
      "todowrite",
      "todoread",
    ]);
    expect(
      mapTools("copilot", [Tool.Read, Tool.Edit], { disallowedTools: ["Write"] }).tools,
    ).toEqual(["read"]);
    expect(
      mapTools("opencode", [Tool.mcp("gh", "x"), Tool.custom("c")], {
        disallowedTools: ["mcp:gh/x", "custom:c"],
      }).tools,
    ).toEqual([]);
  });

  it("warns when a native disallowed name matches nothing", () => {
    const result = mapTools("claude-code", [Tool.Shell], { disallowedTools: ["bash", "LSP"] });
    expect(result.tools).toEqual(["Bash"]);
    expect(result.warnings).toEqual(['disallowedTools entry "bash" matches no Claude Code tool.']);
  });
});
