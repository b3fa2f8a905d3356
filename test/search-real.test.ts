import { describe, expect, it } from "vitest";
import { scoreSearch } from "../bench/search-fixture";
import {
  laterHeldOutSets,
  loadLaterHeldOutSet,
  loadRealCatalog,
  loadRealQueries,
} from "../bench/search-real";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";

// The real catalog (published MCP servers' tools, registered through mcpToolsetPlan) and its
// labelled queries. Only the tune part is asserted on: the held-out part is reported by
// `npm run bench -- search-real`, never used as a target.
describe("search on the real catalog", () => {
  const catalog = loadRealCatalog();
  const labelled = loadRealQueries(catalog);

  it("registers every published server's tools, ids unique, and resolves every label", () => {
    expect(catalog.tools.length).toBeGreaterThanOrEqual(150);
    expect(new Set(catalog.tools.map((tool) => tool.id)).size).toBe(catalog.tools.length);
    // Only the gitlab server's schemas (no "type": "object") needed adjusting to register.
    expect(catalog.adjusted.map((server) => server.package)).toEqual([
      "@modelcontextprotocol/server-gitlab",
    ]);
    expect(catalog.ids.get("@modelcontextprotocol/server-slack#slack_post_message")).toBe(
      "slack_post_message",
    );
    // Ids two servers list are renamed on both, after their toolsets.
    expect(catalog.ids.get("@modelcontextprotocol/server-filesystem#read_file")).toBe(
      "filesystem_read_file",
    );
    const known = new Set(catalog.tools.map((tool) => tool.id));
    for (const query of labelled?.queries ?? []) {
      for (const id of query.relevant) expect(known.has(id), id).toBe(true);
    }
  });

  it.runIf(labelled)("puts a right tool in the top 5 for most tune queries", () => {
    const index = ToolIndex.build(catalog.tools, catalog.toolsets);
    const rank = (query: string) =>
      index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);
    const tune = scoreSearch(
      (labelled?.queries ?? []).filter((query) => query.part === "tune"),
      rank,
    );
    expect(tune.recallAt5).toBeGreaterThanOrEqual(0.85);
    expect(tune.recallAt1).toBeGreaterThanOrEqual(0.6);
  });
});

// The later held-out sets (heldout2, heldout3, heldout4): only their labels are checked here, never how
// search ranks their queries, which is reported once by `npm run bench -- search-real`.
describe.each(laterHeldOutSets)("the %s held-out set's labels", (set) => {
  const labelled = loadLaterHeldOutSet(set);

  it.runIf(labelled)("resolve to tool ids, and every query has a tool of the set", () => {
    if (!labelled) return;
    expect(labelled.packages.size).toBeGreaterThanOrEqual(15);
    expect(labelled.queries.length).toBeGreaterThanOrEqual(150);
    const known = new Set(labelled.catalog.tools.map((tool) => tool.id));
    const perServer = new Map<string, number>();
    for (const query of labelled.queries) {
      for (const id of query.relevant) expect(known.has(id), `${query.q}: ${id}`).toBe(true);
      const own = new Set(
        query.labels
          .map((label) => label.slice(0, label.lastIndexOf("#")))
          .filter((pkg) => labelled.packages.has(pkg)),
      );
      expect(own.size, query.q).toBeGreaterThan(0);
      for (const pkg of own) perServer.set(pkg, (perServer.get(pkg) ?? 0) + 1);
    }
    expect(labelled.unresolved).toBe(0);
    // Every server of the set is the need of at least 3 queries.
    for (const pkg of labelled.packages)
      expect(perServer.get(pkg) ?? 0, pkg).toBeGreaterThanOrEqual(3);
  });
});
