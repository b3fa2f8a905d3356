import { describe, expect, it } from "vitest";
import { loadSearchFixture, scoreSearch } from "../bench/search-fixture";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";

// The ranking is deterministic, so its quality on the labelled fixture is too: these floors
// catch a change that makes search worse. The figures themselves are in `npm run bench`.
describe("search quality on the labelled fixture", () => {
  const fixture = loadSearchFixture();
  const index = ToolIndex.build(fixture.tools, fixture.toolsets);
  const rank = (query: string) =>
    index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);

  it("has at least 200 tools and 100 queries, every third held out", () => {
    expect(fixture.tools.length).toBeGreaterThanOrEqual(200);
    expect(fixture.queries.length).toBeGreaterThanOrEqual(100);
    const known = new Set(fixture.tools.map((tool) => tool.id));
    fixture.queries.forEach((query, i) => {
      expect(query.part).toBe(i % 3 === 2 ? "heldout" : "tune");
      for (const id of query.relevant) expect(known.has(id), id).toBe(true);
    });
  });

  it("puts a right tool in the top 5 for at least 90% of held-out queries", () => {
    const heldout = scoreSearch(
      fixture.queries.filter((query) => query.part === "heldout"),
      rank,
    );
    expect(heldout.recallAt5).toBeGreaterThanOrEqual(0.9);
    expect(heldout.mrr).toBeGreaterThanOrEqual(0.75);
  });
});
