import type { ToolSpec } from "@toolbus/wire/model/tool";
import { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";
import type { CatalogList } from "../../ports";
import type { ExclusionReason, Selection } from "../selection/select";
import type { ActionMatch } from "./actions";
import { documentOf } from "./document";
import type { SearchField } from "./fields";
import { term } from "./terms";
import type { TermMatch, ToolIndex } from "./tool-index";
import { words } from "./words";

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
  /** What the query asks to do and what the tool does, when both say (actions.ts). */
  action?: ActionMatch;
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

/**
 * Which of the query's words were met in which of the fields the index matched, and as which
 * of the tool's words when not as themselves, from the index's own record of the match
 * (`ToolIndex.matches`). A word met as itself or as a related word (concepts.ts, wordnet.ts)
 * is told so, a field that holds the word itself adding nothing of its related words; a word
 * met neither way was a typo or, the last one, half typed. A field the index did not match is
 * never claimed.
 */
export function matchedWords(
  matches: readonly TermMatch[],
  tool: ToolSpec,
  toolsetDescription: string | undefined,
  matched: readonly SearchField[],
): MatchedWord[] {
  const texts = documentOf(tool, toolsetDescription);
  // Each matched field's terms, with the first word of the tool's each came from.
  const fieldTerms = new Map<SearchField, Map<string, string>>();
  for (const field of matched) {
    const found = new Map<string, string>();
    for (const word of words(texts[field])) {
      const indexed = term(word);
      if (indexed !== null && !found.has(indexed)) found.set(indexed, word);
    }
    fieldTerms.set(field, found);
  }
  // In the query's order.
  const byWord = new Map<string, TermMatch[]>();
  for (const match of [...matches].sort((a, b) => a.at - b.at)) {
    byWord.set(match.word, [...(byWord.get(match.word) ?? []), match]);
  }
  const out: MatchedWord[] = [];
  for (const [word, all] of byWord) {
    const plain = all.filter((match) => match.kind === "itself" || match.kind === "related");
    // Completions and typos are told only for a word met no other way.
    const used = plain.length > 0 ? plain : all;
    const itself = new Set(
      used.filter((match) => match.kind === "itself").flatMap((match) => match.fields),
    );
    const fields = new Set<SearchField>();
    const as = new Set<string>();
    for (const match of used) {
      for (const field of match.fields) {
        const present = fieldTerms.get(field);
        if (!present) continue;
        fields.add(field);
        if (match.kind === "itself" || itself.has(field)) continue;
        const theirs = present.get(match.term);
        if (theirs !== undefined) as.add(theirs);
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
      words: matchedWords(
        index.matches(input.query, tool.id),
        tool,
        descriptions.get(tool.toolset),
        hit.matched,
      ),
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
  /** The index the tools were found in: it says how it matched each. */
  index: ToolIndex;
  tools: readonly T[];
  catalog: CatalogList;
  selection: Selection;
  administers: boolean;
}): Promise<{ tools: (T & { explanation: ToolExplanation })[]; excluded?: ExcludedMatch[] }> {
  const { catalog, selection } = input;
  const specs = new Map(catalog.tools.map((tool) => [tool.id, tool]));
  const descriptions = new Map(catalog.toolsets.map((set) => [set.name, set.description]));
  const tools = input.tools.map((found) => {
    const spec = specs.get(found.id);
    const matches = spec ? input.index.matches(input.query, spec.id) : [];
    const action = input.index.action(input.query, found.id);
    const explanation: ToolExplanation = {
      words: spec ? matchedWords(matches, spec, descriptions.get(spec.toolset), found.matched) : [],
      notes: notesOf(found.id, selection),
      ...(action ? { action } : {}),
    };
    return { ...found, explanation };
  });
  if (!input.administers) return { tools };
  return { tools, excluded: await excludedMatches(input) };
}
