import { SearchService } from "@toolbus/core/app/search/service";
import { parseStageConfig } from "@toolbus/core/config";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kangarooTool } from "./support/kangaroo-tools";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const toolset: ToolsetSpec = {
  name: "wildlife_kit",
  description: "Tools a wildlife team uses, for synonym tests.",
  owner: "synonym-tests",
  kind: "builtin",
};

// An organization's own word for its kangaroo counts ("mob census") and a product's name for
// its counter ("hopper"): no built-in group relates either to what the tools say.
const SYNONYMS = [
  ["mob census", "kangaroo counter"],
  ["hopper", "kangaroo"],
];

const tools = [
  kangarooTool(toolset.name, "roo_count", "Open kangaroo counter"),
  kangarooTool(toolset.name, "roo_reset", "Reset kangaroo counter"),
];

let system: TestToolbus;

beforeAll(async () => {
  system = await startTestToolbus({
    config: { search: { synonyms: SYNONYMS } },
    tools: [...builtinTools, ...tools],
    toolsets: [...builtinToolsets, toolset],
  });
});
afterAll(async () => {
  await system?.stop();
});

const found = async (q: string) => {
  const response = await system.request(`/v1/tools/search?${new URLSearchParams({ q })}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { tools: { id: string }[] };
  return body.tools.map((tool) => tool.id);
};

describe("a stage's own synonyms (search.synonyms)", () => {
  it("find a tool by the stage's word for what it does, where the built-in words find none", async () => {
    const admin = { id: "synonym-admin", role: "admin" };
    const builtInOnly = new SearchService({ selection: system.toolbus.apiDeps.selection });
    const without = await builtInOnly.search(admin, { query: "start the mob census" });
    expect(without.tools.map((tool) => tool.id)).not.toContain("roo_count");

    const ids = await found("start the mob census");
    expect(ids[0]).toBe("roo_count");
  });

  it("stand for single words too, and explain the match as a related word", async () => {
    expect((await found("reset the hopper tally")).slice(0, 1)).toEqual(["roo_reset"]);
    const response = await system.request("/v1/tools/search", {
      method: "POST",
      json: { q: "reset the hopper tally", explain: true },
    });
    const body = (await response.json()) as {
      tools: { id: string; explanation?: { words: { word: string; as?: string[] }[] } }[];
    };
    const top = body.tools[0];
    expect(top?.id).toBe("roo_reset");
    // "hopper" was met as the tool's own word for it.
    const hopper = top?.explanation?.words.find((word) => word.word === "hopper");
    expect(hopper?.as).toContain("kangaroos");
  });
});

describe("search.synonyms in the stage configuration", () => {
  it("accepts groups of words and phrases", () => {
    const config = parseStageConfig({ search: { synonyms: SYNONYMS } });
    expect(config.search?.synonyms).toEqual(SYNONYMS);
  });

  it("refuses a member that could never apply, naming where it is and why", () => {
    expect(() => parseStageConfig({ search: { synonyms: [["ticket", "the"]] } })).toThrow(
      /search\.synonyms\.0\.1.*no searchable word/s,
    );
    expect(() => parseStageConfig({ search: { synonyms: [["sign in", "log in"]] } })).toThrow(
      /search\.synonyms\.0\.1.*that word alone/s,
    );
  });

  it("refuses a group of one, an empty member, too long a member and unknown keys", () => {
    for (const search of [
      { synonyms: [["alone"]] },
      { synonyms: [["ticket", ""]] },
      { synonyms: [["ticket", "x".repeat(101)]] },
      { synonym: [["ticket", "issue"]] },
    ]) {
      expect(() => parseStageConfig({ search }), JSON.stringify(search).slice(0, 60)).toThrow();
    }
  });
});
