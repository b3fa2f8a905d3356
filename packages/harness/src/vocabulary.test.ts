import { ValidationError } from "@toolbus/wire/errors";
import { describe, expect, it } from "vitest";
import {
  parseTool,
  TOOL_NAMES,
  Tool,
  toolFromString,
  toolKey,
  universalToolString,
} from "./vocabulary";

describe("the universal tool vocabulary", () => {
  it("offers every universal tool as a typed constant", () => {
    expect(Tool.Read).toEqual({ kind: "builtin", name: "Read" });
    expect(Tool.Subagent).toEqual({ kind: "builtin", name: "Subagent" });
    expect(Tool.Todo).toEqual({ kind: "builtin", name: "Todo" });
  });

  it("treats Bash as an alias of Shell, typed and over the wire", () => {
    expect(Tool.Bash).toEqual(Tool.Shell);
    expect(toolFromString("Bash")).toEqual(Tool.Shell);
  });

  it("reads every built-in name and reads its own string form back", () => {
    for (const name of TOOL_NAMES) {
      const tool = toolFromString(name);
      expect(toolFromString(toolKey(tool))).toEqual(tool);
    }
  });

  it("passes custom names through verbatim", () => {
    expect(Tool.custom("my_tool")).toEqual({ kind: "custom", name: "my_tool" });
    expect(toolFromString("custom:ext.tool/run")).toEqual({
      kind: "custom",
      name: "ext.tool/run",
    });
    expect(toolKey(Tool.custom("my_tool"))).toBe("custom:my_tool");
  });

  it("rejects custom names with whitespace, commas or newlines", () => {
    for (const name of ["", "a b", "a,b", "a\nb", "a\tb", "x".repeat(129)]) {
      expect(() => Tool.custom(name)).toThrow(ValidationError);
      expect(parseTool(`custom:${name}`).ok).toBe(false);
    }
  });

  it("names MCP tools by server and tool, and checks both", () => {
    expect(Tool.mcp("toolbus", "web_search")).toEqual({
      kind: "mcp",
      server: "toolbus",
      tool: "web_search",
    });
    expect(toolFromString("mcp:toolbus/web_search")).toEqual(Tool.mcp("toolbus", "web_search"));
    expect(toolKey(Tool.mcp("toolbus", "web_search"))).toBe("mcp:toolbus/web_search");
    for (const bad of ["mcp:toolbus", "mcp:/x", "mcp:a b/x", "mcp:a/b/c", "mcp:a/", "mcp:a:b/c"]) {
      expect(parseTool(bad).ok, bad).toBe(false);
    }
    expect(() => Tool.mcp("tool bus", "x")).toThrow(ValidationError);
  });

  it("rejects an unknown name with the list of valid ones", () => {
    const parsed = parseTool("Reed");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.message).toContain('"Reed"');
    for (const name of [...TOOL_NAMES, "custom:<name>", "mcp:<server>/<tool>"]) {
      expect(parsed.message).toContain(name);
    }
    // Names are case-sensitive: the native spelling of another harness is not universal.
    expect(parseTool("read").ok).toBe(false);
  });

  it("validates wire strings with zod, reporting the same message", () => {
    expect(universalToolString.safeParse("Todo").success).toBe(true);
    const result = universalToolString.safeParse("Teleport");
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/Unknown tool "Teleport"\. Use one of Read/);
  });

  it("keeps the echo of a huge bad value short", () => {
    const parsed = parseTool("x".repeat(10_000));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message.length).toBeLessThan(400);
  });
});
