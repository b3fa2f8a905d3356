import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";
import MiniSearch, { type SearchOptions } from "minisearch";
import { relatedTerms } from "./concepts";
import { documentOf, typoEdits } from "./document";
import { FIELD_WEIGHTS, type SearchField } from "./fields";
import { term, words } from "./terms";

/** Distinct terms of a query that are searched, at most: more than any need is put in. */
const MAX_QUERY_TERMS = 32;

/** Terms related to a query's (concepts.ts) that are searched besides them, at most. */
const MAX_RELATED_TERMS = 48;

/**
 * What a match of a related term is worth beside one of the query's own terms, in score and
 * in the count of query terms a tool matches. Chosen on the real catalog's tune queries only
 * (bench/search-real.ts).
 */
const RELATED = { weight: 0.4, match: 0.75 };

/**
 * ... when it stands in for a query word the catalog never uses ("folder" where every tool
 * says "directory"): then it is all the query has of that word.
 */
const STAND_IN = { weight: 0.8, match: 1 };

/**
 * How much covering more of the query's words counts: MiniSearch multiplies a tool's summed
 * score by the number of terms it matched; this raises the number of words covered to this
 * power instead, so a long description that mentions many of a query's words (or many
 * synonyms of one) does not outrank a tool named for two of them.
 */
const COVERAGE_EXPONENT = 0.75;

/** Words of an example's input that are indexed, at most: enough to show its vocabulary. */

export interface SearchHit {
  id: string;
  /** BM25 over the weighted fields; comparable within one search only. */
  score: number;
  /** Fields a query word was found in, in the order of SEARCH_FIELDS. */
  matched: SearchField[];
}

type SearchDocument = Record<SearchField, string>;

/** A last word shorter than this is not taken as half typed: `s`, `ve`, `pdf` match as they are. */
const MIN_PREFIX_LENGTH = 4;

const SEARCH_OPTIONS: SearchOptions = {
  boost: FIELD_WEIGHTS,
  combineWith: "OR",
  // A fuzzy or prefix match is worth less than the word itself.
  weights: { fuzzy: 0.3, prefix: 0.4 },
  // Both decided per search (ToolIndex.search).
  fuzzy: false,
  prefix: false,
};

/**
 * A ranked index of a catalog's tools. Built once per catalog version (a few ms for a
 * thousand tools) and then only read, so one index serves every request of a process.
 */
export class ToolIndex {
  private constructor(
    private readonly index: MiniSearch<SearchDocument>,
    /** Every term the catalog's text holds: a query word among them is no typo. */
    private readonly vocabulary: ReadonlySet<string>,
  ) {}

  static build(
    tools: readonly ToolSpec[],
    toolsets: readonly Pick<ToolsetSpec, "name" | "description">[] = [],
  ): ToolIndex {
    const toolsetText = new Map(toolsets.map((set) => [set.name, set.description]));
    const vocabulary = new Set<string>();
    const index = new MiniSearch<SearchDocument>({
      fields: [...SEARCH_FIELDS],
      tokenize: words,
      processTerm: (word) => {
        const indexed = term(word);
        if (indexed !== null) vocabulary.add(indexed);
        return indexed;
      },
      searchOptions: SEARCH_OPTIONS,
    });
    index.addAll(tools.map((tool) => documentOf(tool, toolsetText.get(tool.toolset))));
    return new ToolIndex(index, vocabulary);
  }

  /** The best `limit` tools for the query among those `allowed`, best first. */
  search(query: string, options: { limit: number; allowed: (id: string) => boolean }) {
    const hits: SearchHit[] = [];
    // Each distinct term once (after stop words and stemming, so "refund refunds refunded"
    // is one term), at most so many: a query's cost and weight are bounded by its meaning,
    // however often a caller repeats it.
    const terms = new Set<string>();
    const all = words(query);
    for (const word of all) {
      const indexed = term(word);
      if (indexed !== null) terms.add(indexed);
      if (terms.size === MAX_QUERY_TERMS) break;
    }
    // The last word may be half typed ("refu"): it also matches as the start of longer words,
    // when it is long enough to say which, is not a stop word, and was searched at all.
    const last = all.at(-1);
    const partial = last !== undefined ? term(last) : null;
    const prefixed =
      last !== undefined &&
      partial !== null &&
      terms.has(partial) &&
      last.length >= MIN_PREFIX_LENGTH &&
      partial.length >= MIN_PREFIX_LENGTH
        ? partial
        : undefined;
    // What the need may be called in the catalog's words (concepts.ts), worth less than its
    // own words; only terms the catalog holds, so an expansion never costs a fuzzy search.
    const related = new Map<string, typeof RELATED>();
    // Each searched term -> the query words (by position in `own`) it covers, and how much.
    const own = [...terms];
    const covers = new Map<string, { words: number[]; match: number }>(
      own.map((word, i) => [word, { words: [i], match: 1 }]),
    );
    for (const [word, standsFor] of relatedTerms(terms)) {
      if (!this.vocabulary.has(word)) continue;
      const weight = standsFor.some((other) => !this.vocabulary.has(other)) ? STAND_IN : RELATED;
      related.set(word, weight);
      covers.set(word, {
        words: standsFor.map((other) => own.indexOf(other)),
        match: weight.match,
      });
      if (related.size === MAX_RELATED_TERMS) break;
    }
    const results = this.index.search([...terms, ...related.keys()].join(" "), {
      // The terms are already processed: split and take them as they are.
      tokenize: (text) => text.split(" "),
      processTerm: (text) => text || null,
      prefix: (text) => text === prefixed,
      // A word the catalog holds is taken as written ("tables" is no typo of "labels"), and a
      // related word is the catalog's own.
      fuzzy: (text) => (this.vocabulary.has(text) || related.has(text) ? false : typoEdits(text)),
      boostTerm: (text) => related.get(text)?.weight ?? 1,
      filter: (result) => options.allowed(result.id),
    });
    // MiniSearch multiplied each score by the number of query terms matched: undone, and
    // redone by the query words covered (COVERAGE_EXPONENT).
    const covered = new Float64Array(own.length);
    const ranked = results
      .map((result) => {
        // How many of the query's words the tool covers: by the word itself, or (for less)
        // by a related term standing for it; three synonyms of one word cover one word.
        covered.fill(0);
        for (const word of result.queryTerms) {
          const cover = covers.get(word);
          if (!cover) continue;
          for (const i of cover.words)
            if ((covered[i] ?? 0) < cover.match) covered[i] = cover.match;
        }
        let matched = 0;
        for (const value of covered) matched += value;
        const summed = result.score / (result.queryTerms.length || 1);
        return { result, score: summed * matched ** COVERAGE_EXPONENT };
      })
      // Stable: equal scores keep MiniSearch's order.
      .sort((a, b) => b.score - a.score);
    for (const { result, score } of ranked.slice(0, options.limit)) {
      const fields = new Set<string>(Object.values(result.match).flat());
      hits.push({
        id: result.id,
        score: Math.round(score * 1000) / 1000,
        matched: SEARCH_FIELDS.filter((field) => fields.has(field)),
      });
    }
    return hits;
  }
}
