import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";
import SearchableMap from "minisearch/SearchableMap";
import {
  type Action,
  type ActionMatch,
  actionAgreement,
  actionMatch,
  queryAction,
  toolAction,
} from "./actions";
import { builtInConcepts, type ConceptIndex } from "./concepts";
import { documentOf, typoEdits } from "./document";
import { FIELD_WEIGHTS, type SearchField } from "./fields";
import { term } from "./terms";
import { wordnetRelated, wordnetTerms } from "./wordnet";
import { words } from "./words";

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
 * What a term WordNet relates to a query's (wordnet.ts) is worth: less than a concept's, as it
 * was written for English at large, not for tools; more when it stands in for a word the
 * catalog never uses.
 */
const WORDNET = {
  weight: 0.1,
  match: 0.3,
};
const WORDNET_STAND_IN = {
  weight: 0.5,
  match: 0.8,
};

/** Terms WordNet relates to a query's that are searched, at most. */
const MAX_WORDNET_TERMS = 48;

/**
 * How much covering more of the query's words counts: a tool's summed score is multiplied by
 * the number of the query's words it covers raised to this power (not by the number of terms
 * it matched, as MiniSearch did), so a long description that mentions many of a query's words (or many
 * synonyms of one) does not outrank a tool named for two of them.
 */
const COVERAGE_EXPONENT = 0.75;

/**
 * How much more a tool of a toolset the query names counts ("file it in Linear", "on Slack"):
 * a need that names a product means that product's tools.
 */
const NAMED_TOOLSET = 1.5;

/** Words of a toolset's name that say how it is served, not what it is (`github_mcp`). */
const GENERIC_NAME_WORDS = new Set(["mcp", "server", "api", "tools"]);

/** Words no dictionary relates that are no product's name either ("everything", a toolset's). */
const PRONOUNS = new Set(["everyth", "anyth", "someth", "noth", "everyon", "anyon", "someon"]);

export interface SearchHit {
  id: string;
  /** BM25F over the weighted fields; comparable within one search only. */
  score: number;
  /** Fields a query word was found in, in the order of SEARCH_FIELDS. */
  matched: SearchField[];
}

/** A last word shorter than this is not taken as half typed: `s`, `ve`, `pdf` match as they are. */
const MIN_PREFIX_LENGTH = 4;

/** A fuzzy or prefix match is worth less than the word itself. */
const WEIGHTS = { fuzzy: 0.3, prefix: 0.4 };

/**
 * BM25F's parameters. A term's frequencies in a tool's fields are first weighted (fields.ts)
 * and length-normalised (`b`, per field against that field's average length) and summed, then
 * saturated once (`k`), and the sum scaled by the term's rarity over whole tools: a tool's name
 * word, held by its id, title, description and usage hint alike, counts as one strong match,
 * not four separately saturated ones each scaled by how rare the word is in that field alone
 * (field by field, a word most tools' descriptions hold but few names, "file", counted as rare
 * in each name holding it). A name word's weighted frequencies already sum to about eight, so
 * `k` bends only well past that; `d` is BM25+'s floor for any match. Chosen on the real
 * catalog's tune queries (bench/search-real.ts), the fixture's tune queries and, as a check of
 * what holds beyond the concepts written for the tune queries, the tune queries with those
 * concepts left out; the ranking barely moves for `k` from 16 to 64.
 */
const BM25F = { k: 32, b: 0.7, d: 0.25 };

const FIELD_BOOSTS = SEARCH_FIELDS.map((field) => FIELD_WEIGHTS[field]);

/**
 * The tools one term is found in, with what it is worth in each, fixed once the index is
 * built: its BM25F over the weighted fields holding it, and those fields, as bits in
 * SEARCH_FIELDS' order. In the order a tool is first met reading field by field.
 */
interface Posting {
  docs: Int32Array;
  scores: Float64Array;
  fields: Uint16Array;
}

/** How a searched term stands for the query's words: itself, or another word for it. */
export type MatchKind = "itself" | "prefix" | "typo" | "related";

/** One term searched: its postings, what a match is worth, and the query words it covers. */
interface Searched {
  /** The catalog's term. */
  term: string;
  kind: MatchKind;
  posting: Posting;
  weight: number;
  cover: { words: number[]; match: number };
}

/** A query's searched terms, and its distinct words (terms) with the first way each was written. */
interface Expansion {
  terms: Set<string>;
  own: string[];
  written: string[];
  searched: Searched[];
}

/** One of the query's words met in a tool, as the index met it (for `explain`). */
export interface TermMatch {
  /** The query's word, as first written, and where it stands among the query's words. */
  word: string;
  at: number;
  kind: MatchKind;
  /** The catalog's term it was met as. */
  term: string;
  fields: SearchField[];
}

/**
 * A ranked index of a catalog's tools: BM25F over the weighted fields (fields.ts), with
 * stemming, typo tolerance, the last word's prefix, related terms (concepts.ts, then
 * wordnet.ts) and the toolsets a query names, each term's postings scored once when the index
 * is built. Built once per catalog version (a few
 * ms for a thousand tools) and then only read, so one index serves every request of a process.
 */
export class ToolIndex {
  private constructor(
    private readonly ids: readonly string[],
    /** Every term the catalog's text holds, with its postings: a query word among them is no typo. */
    private readonly postings: SearchableMap<Posting>,
    /** Each tool's toolset, as an index into `toolsetNames`. */
    private readonly toolsetOf: Int32Array,
    /** Each toolset's name, as its terms (`google_maps`: google, map). */
    private readonly toolsetNames: readonly (readonly string[])[],
    /** What each tool's name says it does (actions.ts). */
    private readonly actions: readonly (Action | undefined)[],
    /** The words that stand for one another (concepts.ts), the stage's own among them. */
    private readonly concepts: ConceptIndex,
  ) {}

  static build(
    tools: readonly ToolSpec[],
    toolsets: readonly Pick<ToolsetSpec, "name" | "description">[] = [],
    options: { concepts?: ConceptIndex } = {},
  ): ToolIndex {
    const toolsetText = new Map(toolsets.map((set) => [set.name, set.description]));
    const fieldCount = SEARCH_FIELDS.length;
    const count = tools.length;
    // A field's length is its distinct words (stop words too), as MiniSearch counted it.
    const lengths = new Float64Array(count * fieldCount);
    const average = new Float64Array(fieldCount);
    // Term -> per field, tool -> how often the field holds it.
    const frequencies = new Map<string, Map<number, number>[]>();
    // Each word's term, stemmed once for the whole catalog.
    const termOf = new Map<string, string | null>();
    const ids: string[] = [];
    const toolsetIndex = new Map<string, number>();
    const toolsetOf = new Int32Array(count);
    tools.forEach((tool, doc) => {
      const document = documentOf(tool, toolsetText.get(tool.toolset));
      ids.push(tool.id);
      let set = toolsetIndex.get(tool.toolset);
      if (set === undefined) {
        set = toolsetIndex.size;
        toolsetIndex.set(tool.toolset, set);
      }
      toolsetOf[doc] = set;
      SEARCH_FIELDS.forEach((field, f) => {
        const tokens = words(document[field]);
        const length = new Set(tokens).size;
        lengths[doc * fieldCount + f] = length;
        average[f] = (average[f] ?? 0) + length / count;
        for (const token of tokens) {
          let indexed = termOf.get(token);
          if (indexed === undefined) {
            indexed = term(token);
            termOf.set(token, indexed);
          }
          if (indexed === null) continue;
          let byField = frequencies.get(indexed);
          if (!byField) {
            byField = [];
            frequencies.set(indexed, byField);
          }
          let inField = byField[f];
          if (!inField) {
            inField = new Map<number, number>();
            byField[f] = inField;
          }
          inField.set(doc, (inField.get(doc) ?? 0) + 1);
        }
      });
    });
    const postings = new SearchableMap<Posting>();
    // Per tool, the term's weighted, length-normalised frequency summed over its fields.
    const weighted = new Float64Array(count);
    const fields = new Uint16Array(count);
    for (const [indexed, byField] of frequencies) {
      const order: number[] = [];
      // Sparse: forEach visits only the fields that hold the term.
      byField.forEach((inField, f) => {
        const boost = FIELD_BOOSTS[f] as number;
        const avg = average[f] as number;
        for (const [doc, tf] of inField) {
          const length = lengths[doc * fieldCount + f] as number;
          if (fields[doc] === 0) order.push(doc);
          weighted[doc] =
            (weighted[doc] as number) + (boost * tf) / (1 - BM25F.b + (BM25F.b * length) / avg);
          fields[doc] = (fields[doc] as number) | (1 << f);
        }
      });
      // Rarity over whole tools: how many hold the term in any field.
      const idf = Math.log(1 + (count - order.length + 0.5) / (order.length + 0.5));
      const posting: Posting = {
        docs: Int32Array.from(order),
        scores: Float64Array.from(order, (doc) => {
          const tf = weighted[doc] as number;
          return idf * (BM25F.d + (tf * (BM25F.k + 1)) / (tf + BM25F.k));
        }),
        fields: Uint16Array.from(order, (doc) => fields[doc] as number),
      };
      for (const doc of order) {
        weighted[doc] = 0;
        fields[doc] = 0;
      }
      postings.set(indexed, posting);
    }
    const toolsetNames = [...toolsetIndex.keys()].map((name) => [
      ...new Set(
        words(name).flatMap((word) =>
          word.includes("_") || GENERIC_NAME_WORDS.has(word) ? [] : (term(word) ?? []),
        ),
      ),
    ]);
    const actions = tools.map((tool) => toolAction(tool.id));
    const concepts = options.concepts ?? builtInConcepts();
    return new ToolIndex(ids, postings, toolsetOf, toolsetNames, actions, concepts);
  }

  /**
   * The toolsets a query names ("file it in Linear", "our Jira"): those with a word in their
   * name that no dictionary holds ("jira" of atlassian_jira, "github"), however the query
   * writes it, and those whose whole name the query writes as a name, with capitals past its
   * first word ("in Linear"), so that "a linear scale" or "memory" in a need names nothing.
   */
  private namedToolsets(terms: ReadonlySet<string>, query: string): Set<number> {
    const capitalized = new Set<string>();
    // The query's first word is capitalized as a sentence's, not as a name.
    const first = query.search(/\S/);
    for (const match of query.matchAll(/\p{Lu}[\p{L}\p{N}]*/gu)) {
      if (match.index === first) continue;
      for (const part of words(match[0])) {
        const indexed = term(part);
        if (indexed !== null) capitalized.add(indexed);
      }
    }
    // A word WordNet does not relate is taken for a product's (pronouns aside).
    const product = (part: string) =>
      terms.has(part) && wordnetTerms(part).length === 0 && !PRONOUNS.has(part);
    const named = new Set<number>();
    this.toolsetNames.forEach((name, set) => {
      const written = name.every((part) => terms.has(part) && capitalized.has(part));
      if (name.length > 0 && (written || name.some(product))) named.add(set);
    });
    return named;
  }

  /**
   * What a query searches: its own terms, the half-typed last one's completions, typos of words
   * the catalog lacks, and related terms (concepts.ts, then wordnet.ts), each with its postings,
   * worth and the query words it stands for. The one reading of a query, for ranking and for
   * explaining alike.
   */
  private expand(query: string): Expansion {
    // Each distinct term once (after stop words and stemming, so "refund refunds refunded"
    // is one term), at most so many: a query's cost and weight are bounded by its meaning,
    // however often a caller repeats it.
    const terms = new Set<string>();
    const written: string[] = [];
    const all = words(query);
    for (const word of all) {
      const indexed = term(word);
      if (indexed !== null && !terms.has(indexed)) {
        terms.add(indexed);
        written.push(word);
      }
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
    const own = [...terms];
    const searched: Searched[] = [];
    own.forEach((word, i) => {
      const cover = { words: [i], match: 1 };
      const posting = this.postings.get(word);
      if (posting) searched.push({ term: word, kind: "itself", posting, weight: 1, cover });
      // A half-typed last word: the longer words it starts.
      const prefixes = word === prefixed ? this.postings.atPrefix(word) : undefined;
      if (prefixes) {
        for (const [longer, posting] of prefixes) {
          const distance = longer.length - word.length;
          if (distance === 0) continue;
          const weight = (WEIGHTS.prefix * longer.length) / (longer.length + 0.3 * distance);
          searched.push({ term: longer, kind: "prefix", posting, weight, cover });
        }
      }
      // A word the catalog holds is taken as written ("tables" is no typo of "labels").
      const edits = posting ? false : typoEdits(word);
      if (edits) {
        for (const [typo, [posting, distance]] of this.postings.fuzzyGet(word, edits)) {
          if (distance === 0 || prefixes?.has(typo)) continue;
          const weight = (WEIGHTS.fuzzy * typo.length) / (typo.length + distance);
          searched.push({ term: typo, kind: "typo", posting, weight, cover });
        }
      }
    });
    // What the need may be called in the catalog's words (concepts.ts), worth less than its
    // own words, then what WordNet relates them to (wordnet.ts), for less again; only terms
    // the catalog holds, so an expansion never costs a fuzzy search. A related term is worth
    // more when it stands in for a word the catalog never uses.
    const related = (
      expansion: ReadonlyMap<string, readonly string[]>,
      worth: { plain: typeof RELATED; standIn: typeof RELATED },
      max: number,
    ) => {
      let count = 0;
      for (const [word, standsFor] of expansion) {
        const posting = this.postings.get(word);
        if (!posting) continue;
        const standsIn = standsFor.some((other) => !this.postings.has(other));
        const { weight, match } = standsIn ? worth.standIn : worth.plain;
        const words = standsFor.map((other) => own.indexOf(other));
        searched.push({ term: word, kind: "related", posting, weight, cover: { words, match } });
        if (++count === max) break;
      }
    };
    const concepts = this.concepts.related(terms);
    related(concepts, { plain: RELATED, standIn: STAND_IN }, MAX_RELATED_TERMS);
    related(
      wordnetRelated(terms, concepts),
      { plain: WORDNET, standIn: WORDNET_STAND_IN },
      MAX_WORDNET_TERMS,
    );
    return { terms, own, written, searched };
  }

  /**
   * How each of the query's words was met in the tool `id`, exactly as `search` met it: the
   * terms that matched, how (itself, a completion, a typo, a related word) and in which fields.
   */
  matches(query: string, id: string): TermMatch[] {
    const doc = this.ids.indexOf(id);
    if (doc < 0) return [];
    const { written, searched } = this.expand(query);
    const out: TermMatch[] = [];
    for (const { term: met, kind, posting, cover } of searched) {
      const k = posting.docs.indexOf(doc);
      if (k < 0) continue;
      const bits = posting.fields[k] as number;
      const fields = SEARCH_FIELDS.filter((_, f) => (bits & (1 << f)) !== 0);
      for (const i of cover.words) {
        const word = written[i];
        if (word !== undefined) out.push({ word, at: i, kind, term: met, fields });
      }
    }
    return out;
  }

  /** What the query asks to do beside what the tool `id` does, as `search` weighed it. */
  action(query: string, id: string): ActionMatch | undefined {
    const doc = this.ids.indexOf(id);
    return doc < 0 ? undefined : actionMatch(queryAction(query), this.actions[doc]);
  }

  /** The best `limit` tools for the query among those `allowed`, best first. */
  search(query: string, options: { limit: number; allowed: (id: string) => boolean }) {
    const { terms, own, searched } = this.expand(query);
    // Each tool's summed score, the fields it matched in, and how much of each query word it
    // covers: by the word itself, or (for less) by a related term standing for it; three
    // synonyms of one word cover one word.
    const size = this.ids.length;
    const wordCount = own.length;
    const scores = new Float64Array(size);
    const fields = new Uint16Array(size);
    const covered = new Float64Array(size * wordCount);
    const met: number[] = [];
    for (const { posting, weight, cover } of searched) {
      const { docs } = posting;
      for (let k = 0; k < docs.length; k++) {
        const doc = docs[k] as number;
        if (fields[doc] === 0) met.push(doc);
        scores[doc] = (scores[doc] as number) + weight * (posting.scores[k] as number);
        fields[doc] = (fields[doc] as number) | (posting.fields[k] as number);
        for (const i of cover.words) {
          const at = doc * wordCount + i;
          if ((covered[at] as number) < cover.match) covered[at] = cover.match;
        }
      }
    }
    // Covering more of the query's words counts for more (COVERAGE_EXPONENT), and so does
    // being of a toolset the query names (NAMED_TOOLSET) and doing what it asks (actions.ts).
    const namedSets = this.namedToolsets(terms, query);
    const asked = queryAction(query);
    const ranked = new Float64Array(size);
    for (const doc of met) {
      let matched = 0;
      for (let i = 0; i < wordCount; i++) matched += covered[doc * wordCount + i] as number;
      const named = namedSets.has(this.toolsetOf[doc] as number) ? NAMED_TOOLSET : 1;
      const agreement = actionAgreement(asked, this.actions[doc]);
      ranked[doc] = (scores[doc] as number) * matched ** COVERAGE_EXPONENT * named * agreement;
    }
    // Stable: equal scores keep the order tools were met in.
    met.sort((a, b) => (ranked[b] as number) - (ranked[a] as number));
    const hits: SearchHit[] = [];
    for (const doc of met) {
      if (hits.length === options.limit) break;
      const id = this.ids[doc] as string;
      if (!options.allowed(id)) continue;
      const bits = fields[doc] as number;
      hits.push({
        id,
        score: Math.round((ranked[doc] as number) * 1000) / 1000,
        matched: SEARCH_FIELDS.filter((_, f) => (bits & (1 << f)) !== 0),
      });
    }
    return hits;
  }
}
