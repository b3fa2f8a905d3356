import { readFileSync } from "node:fs";
import { join } from "node:path";
import { toolSpecOf } from "../packages/core/src/tool-definition";
import { builtinTools, builtinToolsets } from "../packages/tools/src/builtin";
import {
  type ToolSpec,
  type ToolsetSpec,
  toolSpec,
  toolsetSpec,
} from "../packages/wire/src/model/tool";

const FIXTURE = join(import.meta.dirname, "..", "test", "fixtures", "search");

export type QueryPart = "tune" | "heldout";

/**
 * The parts a search bench scores: the tune part alone with BENCH_SEARCH_TUNE_ONLY=1, so
 * nothing of the held-out part is scored or printed while the ranking is being tuned.
 */
export function benchParts(): QueryPart[] {
  return process.env.BENCH_SEARCH_TUNE_ONLY === "1" ? ["tune"] : ["tune", "heldout"];
}

export interface LabelledQuery {
  q: string;
  relevant: string[];
  part: QueryPart;
}

export interface SearchFixture {
  toolsets: ToolsetSpec[];
  /** The synthetic tools and the built-ins. */
  tools: ToolSpec[];
  queries: LabelledQuery[];
}

/** The fixture catalog (parsed as the catalog parses specs) with the built-ins, and the labels. */
export function loadSearchFixture(): SearchFixture {
  const catalog = JSON.parse(readFileSync(join(FIXTURE, "catalog.json"), "utf8")) as {
    toolsets: unknown[];
    tools: unknown[];
  };
  const { queries } = JSON.parse(readFileSync(join(FIXTURE, "queries.json"), "utf8")) as {
    queries: LabelledQuery[];
  };
  return {
    toolsets: [...builtinToolsets, ...catalog.toolsets.map((set) => toolsetSpec.parse(set))],
    tools: [...builtinTools.map(toolSpecOf), ...catalog.tools.map((tool) => toolSpec.parse(tool))],
    queries,
  };
}

export interface SearchQuality {
  queries: number;
  recallAt1: number;
  recallAt5: number;
  mrr: number;
  /** Queries whose first relevant tool is not in the top 5, for reading (never for tuning on heldout). */
  misses: Array<{ q: string; relevant: string[]; got: string[] }>;
}

/** recall@1, recall@5 and MRR of a ranking over labelled queries. */
export function scoreSearch(
  queries: readonly LabelledQuery[],
  rank: (query: string) => string[],
): SearchQuality {
  let at1 = 0;
  let at5 = 0;
  let reciprocal = 0;
  const misses: SearchQuality["misses"] = [];
  for (const query of queries) {
    const got = rank(query.q);
    const first = got.findIndex((id) => query.relevant.includes(id));
    if (first === 0) at1++;
    if (first >= 0 && first < 5) at5++;
    else misses.push({ q: query.q, relevant: query.relevant, got: got.slice(0, 5) });
    if (first >= 0) reciprocal += 1 / (first + 1);
  }
  const n = queries.length;
  return { queries: n, recallAt1: at1 / n, recallAt5: at5 / n, mrr: reciprocal / n, misses };
}
