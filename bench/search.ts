import { performance } from "node:perf_hooks";
import { term, words } from "../packages/core/src/app/search/terms";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";
import type { ToolSpec } from "../packages/core/src/model/tool";
import {
  type LabelledQuery,
  loadSearchFixture,
  type QueryPart,
  scoreSearch,
} from "./search-fixture";
import { type Measurement, measurement } from "./stats";

const LARGE_CATALOG = 1_000;
const ROUNDS = 5;

/**
 * The baseline ranking: tools by how many of the query's words (stemmed, as the index has
 * them) their text holds, ties by id. What a catalog without an index would do.
 */
function wordOverlap(tools: readonly ToolSpec[]) {
  const texts = tools.map((tool) => ({
    id: tool.id,
    terms: new Set(
      words(
        [tool.id, tool.title, tool.description, tool.usageHint, ...tool.guidelines.do].join(" "),
      ).map((word) => term(word) ?? word),
    ),
  }));
  return (query: string) => {
    const wanted = [...new Set(words(query).flatMap((word) => term(word) ?? []))];
    return texts
      .map((text) => ({ id: text.id, hits: wanted.filter((w) => text.terms.has(w)).length }))
      .filter((scored) => scored.hits > 0)
      .sort((a, b) => b.hits - a.hits || (a.id < b.id ? -1 : 1))
      .slice(0, 10)
      .map((scored) => scored.id);
  };
}

/** A catalog of `size` tools: the fixture's, then copies of them under other ids. */
function largeCatalog(tools: readonly ToolSpec[], size: number): ToolSpec[] {
  return Array.from({ length: size }, (_, i) => {
    const tool = tools[i % tools.length] as ToolSpec;
    return i < tools.length ? tool : { ...tool, id: `${tool.id.slice(0, 40)}_c${i}` };
  });
}

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function timeEach(queries: readonly LabelledQuery[], run: (query: string) => unknown): number {
  for (const query of queries) run(query.q);
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of queries) {
      const start = performance.now();
      run(query.q);
      samples.push(performance.now() - start);
    }
  }
  return p50(samples);
}

/**
 * Search quality on the labelled fixture (recall@1, recall@5, MRR on the tune and held-out
 * parts, against plain word overlap) and the latency of one search among 1,000 tools.
 */
export function benchSearch(): Measurement[] {
  const fixture = loadSearchFixture();
  const index = ToolIndex.build(fixture.tools, fixture.toolsets);
  const ranked = (query: string) =>
    index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);
  const overlap = wordOverlap(fixture.tools);
  const results: Measurement[] = [];
  for (const part of ["tune", "heldout"] as QueryPart[]) {
    const queries = fixture.queries.filter((query) => query.part === part);
    const ours = scoreSearch(queries, ranked);
    const plain = scoreSearch(queries, overlap);
    const name = (metric: string) =>
      `search: ${metric}, ${part} queries (${queries.length}), ${fixture.tools.length} tools`;
    const baseline = (value: number) => ({ name: "plain word overlap", value });
    results.push(
      measurement(name("recall@1"), "", ours.recallAt1, baseline(plain.recallAt1), "higher"),
      measurement(name("recall@5"), "", ours.recallAt5, baseline(plain.recallAt5), "higher"),
      measurement(name("MRR"), "", ours.mrr, baseline(plain.mrr), "higher"),
    );
  }

  const large = largeCatalog(fixture.tools, LARGE_CATALOG);
  const buildStart = performance.now();
  const largeIndex = ToolIndex.build(large, fixture.toolsets);
  const buildMs = performance.now() - buildStart;
  const largeOverlap = wordOverlap(large);
  const scanMs = timeEach(fixture.queries, largeOverlap);
  const searchMs = timeEach(fixture.queries, (query) =>
    largeIndex.search(query, { limit: 5, allowed: () => true }),
  );
  results.push(
    measurement(
      `search: one query among ${LARGE_CATALOG.toLocaleString("en-US")} tools, p50`,
      "ms",
      searchMs,
      { name: "plain word overlap scan, p50", value: scanMs },
      "lower",
    ),
    measurement(
      `search: index build for ${LARGE_CATALOG.toLocaleString("en-US")} tools (once per catalog version)`,
      "ms",
      buildMs,
      { name: "one query, p50", value: searchMs },
      "lower",
    ),
  );
  return results;
}
