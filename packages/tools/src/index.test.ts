import { toolSpecOf } from "@toolbus/core/tool-definition";
import { toolsetSpec } from "@toolbus/wire/model";
import { describe, expect, it } from "vitest";
import { builtinTools, builtinToolsets, readabilityAnalyzer, staticLinks } from "./index";

describe("builtin catalog", () => {
  it("lists every tool once, sorted by id", () => {
    const ids = builtinTools.map((tool) => tool.spec.id);
    expect(ids).toEqual([
      "calendar",
      "github_api",
      "link_validator",
      "readability_analyzer",
      "rss_feed",
      "static_links",
      "web_search",
    ]);
    expect(builtinTools).toContain(staticLinks);
    expect(builtinTools).toContain(readabilityAnalyzer);
  });

  it("has a valid toolset owned by Toolbus for every tool, and no toolset without tools", () => {
    for (const toolset of builtinToolsets) {
      expect(toolsetSpec.parse(toolset)).toEqual(toolset);
      expect(toolset).toMatchObject({ owner: "toolbus", kind: "builtin" });
    }
    const used = new Set(builtinTools.map((tool) => tool.spec.toolset));
    expect(builtinToolsets.map((t) => t.name).sort()).toEqual([...used].sort());
  });

  it("converts every tool into a catalog spec", () => {
    for (const tool of builtinTools) {
      expect(() => toolSpecOf(tool)).not.toThrow();
    }
  });

  it("cannot be changed by a caller", () => {
    expect(Object.isFrozen(builtinTools)).toBe(true);
    expect(Object.isFrozen(builtinToolsets)).toBe(true);
  });
});
