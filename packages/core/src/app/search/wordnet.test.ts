import { describe, expect, it } from "vitest";
import { term } from "./terms";
import { wordnetRelated, wordnetTerms } from "./wordnet";
import { WORDNET_RELATED } from "./wordnet-data";

const related = (word: string) => wordnetTerms(term(word) as string);

describe("WordNet's relations", () => {
  it("relate a verb to its synonyms and to what it is a way of doing", () => {
    expect(related("delete")).toEqual(expect.arrayContaining([term("remove"), term("erase")]));
    expect(related("halt")).toContain(term("stop"));
  });

  it("relate derived forms Porter's stems leave apart", () => {
    expect(term("creation")).not.toBe(term("create"));
    expect(related("creation")).toContain(term("create"));
  });

  it("leave out glue verbs and a common word's rare senses", () => {
    for (const glue of ["getting", "make", "take", "use", "run", "show", "give"]) {
      expect(related(glue)).toEqual([]);
      const stem = term(glue) ?? glue;
      expect(WORDNET_RELATED).not.toMatch(new RegExp(`[: ]${stem}[ ,]`));
    }
    // "take away" is sense 1 of remove but sense 4 of take's 42: neither leads to the other.
    expect(related("remove")).not.toContain("take");
  });

  it("say which query terms each related term stands for, never the query's own or a concept's", () => {
    const found = wordnetRelated(new Set([term("delete") as string, term("erase") as string]));
    expect(found.get(term("remove") as string)).toEqual([term("delete")]);
    expect(found.has(term("erase") as string)).toBe(false);
    const besides = new Map([[term("remove") as string, ["delete"]]]);
    expect(wordnetRelated(new Set([term("delete") as string]), besides).has("remov")).toBe(false);
  });

  it("ship as a small, well-formed table", () => {
    expect(WORDNET_RELATED.length).toBeLessThan(150_000);
    for (const entry of WORDNET_RELATED.split(",")) {
      expect(entry).toMatch(/^[a-z]+:[a-z]+( [a-z]+){0,4}$/);
      const [from, to = ""] = entry.split(":");
      expect(to.split(" ")).not.toContain(from);
    }
  });
});
