import { toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { builtInConcepts, CONCEPTS, GENERAL_GROUPS } from "./concepts";
import { EVERYDAY_CONCEPTS } from "./concepts-everyday";
import { GENERAL_CONCEPTS } from "./concepts-general";
import { JARGON_CONCEPTS } from "./concepts-jargon";
import { term } from "./terms";
import { ToolIndex } from "./tool-index";
import { conceptMemberProblem, words } from "./words";

/** The terms of a text, as a query has them. */
const termsOf = (text: string) => new Set(words(text).flatMap((word) => term(word) ?? []));
const related = (text: string) => [...builtInConcepts().related(termsOf(text)).keys()];

describe("concept groups", () => {
  it("are data every member of which is searchable as written: no phrase collapses to one word", () => {
    for (const group of [...CONCEPTS, ...GENERAL_GROUPS]) {
      for (const member of group) expect(conceptMemberProblem(member), member).toBeUndefined();
      const members = group.map((member) => [...termsOf(member)]);
      expect(new Set(members.flat()).size, group.join(", ")).toBeGreaterThan(1);
    }
  });

  it("in the general lists, are tight: two to eight lowercase members of at most three words, no group twice", () => {
    const seen = new Set<string>();
    for (const group of [...GENERAL_CONCEPTS, ...EVERYDAY_CONCEPTS, ...JARGON_CONCEPTS]) {
      expect(group.length, group.join(", ")).toBeGreaterThanOrEqual(2);
      expect(group.length, group.join(", ")).toBeLessThanOrEqual(8);
      for (const member of group) {
        expect(member, group.join(", ")).toMatch(/^[a-z0-9]+(?:[ -][a-z0-9]+){0,2}$/);
      }
      const key = [...group].sort().join("|");
      expect(seen.has(key), group.join(", ")).toBe(false);
      seen.add(key);
    }
  });

  it("relate a product's own word for a thing to the common one, both ways", () => {
    expect(related("list my droplets")).toContain(term("instance"));
    expect(related("the current cycle")).toContain(term("sprint"));
    expect(related("open merge requests")).toContain(term("pull"));
    expect(related("change the colour")).toContain(term("color"));
  });

  it("relate an agent's word to the words tools use for it", () => {
    expect(related("the folder")).toContain(term("directory"));
    expect(related("a picture")).toContain(term("image"));
    expect(related("a popup")).toContain(term("dialog"));
    expect(related("latitude")).toContain(term("coordinates"));
    expect(related("remember this")).toEqual(expect.arrayContaining(["knowledg", "graph"]));
  });

  it("say which query words each related term stands for, and never return the query's own", () => {
    const found = builtInConcepts().related(termsOf("folder directory"));
    expect(found.has(term("directory") as string)).toBe(false);
    expect(found.has(term("folder") as string)).toBe(false);
    expect(found.get("dir")).toEqual(expect.arrayContaining(["folder", "directori"]));
  });

  it("apply a phrase member only when the query holds all its words", () => {
    expect(related("knowledge graph")).toContain(term("remember"));
    expect(related("graph")).not.toContain(term("remember"));
  });

  it("are one hop: a related word does not bring its own relations", () => {
    // photo -> drawing (draw) in the pictures group; draw -> paint in the drawing group, but
    // photo does not reach paint.
    expect(related("photo")).toContain(term("drawing"));
    expect(related("draw")).toContain(term("paint"));
    expect(related("photo")).not.toContain(term("paint"));
    expect(related("zebra")).toEqual([]);
  });
});

describe("ToolIndex with concepts", () => {
  const tool = (id: string, description: string) =>
    toolSpec.parse({
      id,
      toolset: "kit",
      title: id,
      description,
      category: "utility",
      usageHint: "In tests.",
      inputSchema: { type: "object" },
      outputSchema: { type: "object" },
    });
  const index = ToolIndex.build([
    tool("list_directory", "Lists the entries of a directory."),
    tool("read_graph", "Reads the whole knowledge graph of entities."),
    tool("weather_now", "The weather in a city right now."),
  ]);
  const ids = (query: string) =>
    index.search(query, { limit: 5, allowed: () => true }).map((hit) => hit.id);

  it("finds a tool by a word the catalog does not use but a concept relates", () => {
    expect(ids("what is in this folder")).toEqual(["list_directory"]);
    expect(ids("what do you remember about me")).toEqual(["read_graph"]);
  });

  it("ranks a tool with the query's own word above one with a related word", () => {
    const both = ToolIndex.build([
      tool("list_directory", "Lists the entries of a directory."),
      tool("list_folder", "Lists the entries of a folder."),
    ]);
    const hits = both.search("list folder", { limit: 5, allowed: () => true });
    expect(hits.map((hit) => hit.id)).toEqual(["list_folder", "list_directory"]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? Number.POSITIVE_INFINITY);
  });

  it("counts a query word once however many of its related words a tool holds", () => {
    const pair = ToolIndex.build([
      tool("text_tool", "Edit, change, modify, alter and adjust any text."),
      tool("update_task", "Updates a task."),
    ]);
    // "reword" relates to update, edit, change ...; "step" to task. The tool covering both
    // words comes first, not the one holding five synonyms of one.
    const hits = pair.search("reword the step", { limit: 5, allowed: () => true });
    expect(hits.map((hit) => hit.id)).toEqual(["update_task", "text_tool"]);
  });
});
