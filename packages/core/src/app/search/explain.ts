import type { ToolSpec } from "@toolbus/wire/model/tool";
import { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";
import type { CatalogList } from "../../ports";
import type { ExclusionReason, Selection } from "../selection/select";
import { relatedTerms } from "./concepts";
import { documentOf, typoEdits } from "./document";
import type { SearchField } from "./fields";
import { term, words } from "./terms";
import type { ToolIndex } from "./tool-index";
import { wordnetRelated } from "./wordnet";

/**
 * Why a search found what it found (`explain`): the query's words and the fields each was met
 * in, and, for administrators, the matching tools selection leaves out and its reasons in
 * words. Loaded with the first search that asks; a plain search never runs any of it.
 */

export interface MatchedWord {
  /** A word of the query as written (lowercased). */
  word: string;
  /** Where it was met, in the order of SEARCH_FIELDS: among the fields the index matched. */
  fields: SearchField[];
  /** The tool's words it was met as, when not as itself: a related word, a typo, a prefix. */
  as?: string[];
}

export interface ToolExplanation {
  words: MatchedWord[];
  /** What else to know before calling the tool, in words. */
  notes: string[];
}

/** A matching tool selection leaves out for the caller; listed to administrators only. */
export interface ExcludedMatch {
  id: string;
  title: string;
  toolset: string;
  score: number;
  matched: SearchField[];
  words: MatchedWord[];
  reasons: ExclusionReason[];
  /** `calendar: needs google_calendar`. */
  why: string;
}

/** The same bound as the index's: more terms than any need is put in. */
const MAX_QUERY_TERMS = 32;

/** A query's searched terms, each with the first word it came from, and its half-typed last one. */
export interface QueryTerms {
  terms: { word: string; term: string }[];
  /** The last word's term, when it may be half typed (long enough) and is searched. */
  partial: string | undefined;
}

/** Shorter last words are not taken as half typed (as the index reads them). */
const MIN_PREFIX_LENGTH = 4;

/** A query's distinct searched terms, as the index takes them (tool-index.ts). */
export function queryTerms(query: string): QueryTerms {
  const seen = new Map<string, string>();
  const all = words(query);
  for (const word of all) {
    const indexed = term(word);
    if (indexed === null || seen.has(indexed)) continue;
    seen.set(indexed, word);
    if (seen.size === MAX_QUERY_TERMS) break;
  }
  const last = all.at(-1);
  const partial = last !== undefined ? term(last) : null;
  const halfTyped =
    last !== undefined &&
    partial !== null &&
    seen.has(partial) &&
    last.length >= MIN_PREFIX_LENGTH &&
    partial.length >= MIN_PREFIX_LENGTH;
  return {
    terms: [...seen].map(([indexed, word]) => ({ word, term: indexed })),
    partial: halfTyped ? partial : undefined,
  };
}

/**
 * Which of the query's words were met in which of the fields the index matched, and as which
 * of the tool's words when not as themselves. A word is met in a field holding it (after
 * stemming), or else holding a word of the same concept (concepts.ts, "folder" for
 * "directory") or one WordNet relates to it (wordnet.ts, "erase" for "delete"); a word met nowhere so may be a typo (one edit in 5-9 letters, two from 10)
 * or, the last one, half typed. A field the index did not match is never claimed.
 */
export function matchedWords(
  query: QueryTerms,
  tool: ToolSpec,
  toolsetDescription: string | undefined,
  matched: readonly SearchField[],
): MatchedWord[] {
  const texts = documentOf(tool, toolsetDescription);
  // Each field's terms, with the first word of the tool's each came from.
  const fieldTerms = new Map<SearchField, Map<string, string>>();
  for (const field of matched) {
    const found = new Map<string, string>();
    for (const word of words(texts[field])) {
      const indexed = term(word);
      if (indexed !== null && !found.has(indexed)) found.set(indexed, word);
    }
    fieldTerms.set(field, found);
  }
  const own = new Set(query.terms.map((entry) => entry.term));
  // What the index searches besides the query's own terms: the concepts' words, then WordNet's.
  const concepts = relatedTerms(own);
  const related = new Map([...concepts, ...wordnetRelated(own, concepts)]);
  const out: MatchedWord[] = [];
  for (const { word, term: wanted } of query.terms) {
    const fields = new Set<SearchField>();
    const as = new Set<string>();
    const others = [...related].filter(([, by]) => by.includes(wanted)).map(([other]) => other);
    for (const [field, present] of fieldTerms) {
      // A field that holds the word itself says so; its related words add nothing to tell.
      if (present.has(wanted)) {
        fields.add(field);
        continue;
      }
      for (const other of others) {
        const theirs = present.get(other);
        if (theirs === undefined) continue;
        fields.add(field);
        as.add(theirs);
      }
    }
    if (fields.size === 0) {
      const typos = typoEdits(wanted) || 0;
      for (const [field, present] of fieldTerms) {
        for (const [candidate, theirs] of present) {
          const prefix = wanted === query.partial && candidate.startsWith(wanted);
          if (!prefix && !(typos > 0 && withinEdits(wanted, candidate, typos))) continue;
          fields.add(field);
          as.add(theirs);
        }
      }
    }
    if (fields.size === 0) continue;
    out.push({
      word,
      fields: SEARCH_FIELDS.filter((field) => fields.has(field)),
      ...(as.size > 0 ? { as: [...as] } : {}),
    });
  }
  return out;
}

/** Levenshtein distance at most `max`, with an early exit once a row exceeds it. */
function withinEdits(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      row.push(value);
      if (value < best) best = value;
    }
    if (best > max) return false;
    previous = row;
  }
  return (previous[b.length] ?? Number.POSITIVE_INFINITY) <= max;
}

/** What else to know about an offered tool before calling it: its caller's connection, its fallback. */
export function notesOf(id: string, selection: Selection): string[] {
  const notes: string[] = [];
  for (const entry of selection.needsConnection) {
    if (entry.tool === id) notes.push(`needs your ${entry.provider} connection`);
  }
  for (const entry of selection.servedByFallback) {
    if (entry.tool !== id) continue;
    const lacks = entry.reasons.map((reason) => reason.replace(/^capability:/, "")).join(", ");
    notes.push(`answered by ${entry.fallback} (lacks ${lacks})`);
  }
  return notes;
}

/** One of selection's reasons in words, for the tool it leaves out. */
export function reasonInWords(reason: ExclusionReason, tool: ToolSpec, mode: string): string {
  if (reason === "disabled") return "disabled";
  if (reason === "mode") {
    const modes = tool.availability.modes ?? [];
    return `not offered in mode ${mode} (only in ${modes.join(", ") || "no mode"})`;
  }
  if (reason === "role") return `needs the ${tool.availability.minRole ?? "higher"} role`;
  if (reason === "denied") return "denied by the request";
  if (reason === "not_allowed") return "not in the request's allow list";
  const capability = reason.slice("capability:".length);
  const provider = /^connections\.(.+)$/.exec(capability)?.[1];
  if (provider) return `needs the stage to connect accounts at ${provider}`;
  return `needs ${capability}`;
}

/** Indexes of whole catalogs, for what is left out: one per catalog read (kept a few seconds). */
const wholeIndexes = new WeakMap<CatalogList, Promise<ToolIndex>>();

/**
 * The matching tools selection leaves out, best first, at most `limit`, with its reasons in
 * words. Ranked in an index of every tool read, so the scores are comparable among them only.
 * For administrators only: the caller decides, not this function.
 */
export async function excludedMatches(input: {
  query: string;
  limit: number;
  catalog: CatalogList;
  selection: Selection;
}): Promise<ExcludedMatch[]> {
  const { catalog, selection } = input;
  if (selection.excluded.length === 0) return [];
  let building = wholeIndexes.get(catalog);
  if (!building) {
    building = import("./tool-index").then(({ ToolIndex }) =>
      ToolIndex.build(catalog.tools, catalog.toolsets),
    );
    building.catch(() => wholeIndexes.delete(catalog));
    wholeIndexes.set(catalog, building);
  }
  const index = await building;
  const left = new Map(selection.excluded.map((entry) => [entry.tool, entry]));
  const specs = new Map(catalog.tools.map((tool) => [tool.id, tool]));
  const descriptions = new Map(catalog.toolsets.map((set) => [set.name, set.description]));
  const terms = queryTerms(input.query);
  const out: ExcludedMatch[] = [];
  for (const hit of index.search(input.query, {
    limit: input.limit,
    allowed: (id) => left.has(id),
  })) {
    const entry = left.get(hit.id);
    const tool = specs.get(hit.id);
    if (!entry || !tool) continue;
    const because = entry.reasons.map((reason) => reasonInWords(reason, tool, selection.mode));
    if (entry.fallbackReasons && tool.fallback) {
      const fallback = specs.get(tool.fallback);
      const its = entry.fallbackReasons.map((reason) =>
        fallback ? reasonInWords(reason, fallback, selection.mode) : reason,
      );
      because.push(`its fallback ${tool.fallback} cannot serve (${its.join("; ")})`);
    }
    out.push({
      id: tool.id,
      title: tool.title,
      toolset: tool.toolset,
      score: hit.score,
      matched: hit.matched,
      words: matchedWords(terms, tool, descriptions.get(tool.toolset), hit.matched),
      reasons: entry.reasons,
      why: `${tool.id}: ${because.join("; ")}`,
    });
  }
  return out;
}

/**
 * A search's tools with why each was found, and for an administrator (`administers`, decided
 * by the caller from app/access.ts) the matching tools selection left out. Nobody else is told
 * of a tool they may not see: not listed, not counted.
 */
export async function explainSearch<T extends { id: string; matched: SearchField[] }>(input: {
  query: string;
  limit: number;
  tools: readonly T[];
  catalog: CatalogList;
  selection: Selection;
  administers: boolean;
}): Promise<{ tools: (T & { explanation: ToolExplanation })[]; excluded?: ExcludedMatch[] }> {
  const { catalog, selection } = input;
  const specs = new Map(catalog.tools.map((tool) => [tool.id, tool]));
  const descriptions = new Map(catalog.toolsets.map((set) => [set.name, set.description]));
  const terms = queryTerms(input.query);
  const tools = input.tools.map((found) => {
    const spec = specs.get(found.id);
    const explanation: ToolExplanation = {
      words: spec ? matchedWords(terms, spec, descriptions.get(spec.toolset), found.matched) : [],
      notes: notesOf(found.id, selection),
    };
    return { ...found, explanation };
  });
  if (!input.administers) return { tools };
  return { tools, excluded: await excludedMatches(input) };
}
