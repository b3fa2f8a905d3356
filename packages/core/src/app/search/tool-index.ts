import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";
import MiniSearch, { type SearchOptions } from "minisearch";
import { FIELD_WEIGHTS, type SearchField } from "./fields";
import { term, words } from "./terms";

/** Distinct terms of a query that are searched, at most: more than any need is put in. */
const MAX_QUERY_TERMS = 32;

/** Words of an example's input that are indexed, at most: enough to show its vocabulary. */
const EXAMPLE_CHARS = 400;

export interface SearchHit {
  id: string;
  /** BM25 over the weighted fields; comparable within one search only. */
  score: number;
  /** Fields a query word was found in, in the order of SEARCH_FIELDS. */
  matched: SearchField[];
}

type SearchDocument = Record<SearchField, string>;

const SEARCH_OPTIONS: SearchOptions = {
  boost: FIELD_WEIGHTS,
  combineWith: "OR",
  // Typos: one edit in 5-9 letter words, two from 10 on (as a stem: "forcast" meets "forecast").
  fuzzy: (word) => (word.length < 5 ? false : word.length < 10 ? 1 : 2),
  // A fuzzy or prefix match is worth less than the word itself.
  weights: { fuzzy: 0.3, prefix: 0.4 },
  // The last word may be half typed.
  prefix: (word, index, all) => index === all.length - 1 && word.length >= 3,
};

/**
 * A ranked index of a catalog's tools. Built once per catalog version (a few ms for a
 * thousand tools) and then only read, so one index serves every request of a process.
 */
export class ToolIndex {
  private constructor(private readonly index: MiniSearch<SearchDocument>) {}

  static build(
    tools: readonly ToolSpec[],
    toolsets: readonly Pick<ToolsetSpec, "name" | "description">[] = [],
  ): ToolIndex {
    const toolsetText = new Map(toolsets.map((set) => [set.name, set.description]));
    const index = new MiniSearch<SearchDocument>({
      fields: [...SEARCH_FIELDS],
      tokenize: words,
      processTerm: term,
      searchOptions: SEARCH_OPTIONS,
    });
    index.addAll(tools.map((tool) => documentOf(tool, toolsetText.get(tool.toolset))));
    return new ToolIndex(index);
  }

  /** The best `limit` tools for the query among those `allowed`, best first. */
  search(query: string, options: { limit: number; allowed: (id: string) => boolean }) {
    const hits: SearchHit[] = [];
    // Each distinct term once (after stop words and stemming, so "refund refunds refunded"
    // is one term), at most so many: a query's cost and weight are bounded by its meaning,
    // however often a caller repeats it.
    const terms = new Set<string>();
    for (const word of words(query)) {
      const indexed = term(word);
      if (indexed !== null) terms.add(indexed);
      if (terms.size === MAX_QUERY_TERMS) break;
    }
    const results = this.index.search([...terms].join(" "), {
      // The terms are already processed: split and take them as they are.
      tokenize: (text) => text.split(" "),
      processTerm: (text) => text || null,
      filter: (result) => options.allowed(result.id),
    });
    for (const result of results.slice(0, options.limit)) {
      const fields = new Set<string>(Object.values(result.match).flat());
      hits.push({
        id: result.id,
        score: Math.round(result.score * 1000) / 1000,
        matched: SEARCH_FIELDS.filter((field) => fields.has(field)),
      });
    }
    return hits;
  }
}

function documentOf(tool: ToolSpec, toolsetDescription: string | undefined): SearchDocument {
  return {
    id: tool.id,
    title: tool.title,
    description: tool.description,
    usageHint: tool.usageHint,
    guidelines: [...tool.guidelines.do, ...tool.guidelines.dont].join("\n"),
    examples: tool.examples
      .map((example) => `${example.title} ${leafText(example.input).slice(0, EXAMPLE_CHARS)}`)
      .join("\n"),
    toolset: `${tool.toolset} ${toolsetDescription ?? ""}`,
  };
}

/** The strings in an example's input, without its JSON punctuation or property names. */
function leafText(value: unknown, budget = { left: EXAMPLE_CHARS }): string {
  if (budget.left <= 0) return "";
  if (typeof value === "string") {
    budget.left -= value.length;
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => leafText(item, budget)).join(" ");
  if (typeof value === "object" && value !== null) {
    return Object.values(value)
      .map((item) => leafText(item, budget))
      .join(" ");
  }
  return "";
}
