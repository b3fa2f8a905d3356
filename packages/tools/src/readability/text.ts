/**
 * Words and sentences of English prose, as readability formulas count them. Linear in the
 * length of the text: a tool call may carry 100,000 characters and must finish well inside
 * its timeout.
 */

/**
 * A word is a dotted abbreviation ("e.g.", "U.S.A."), or letters and digits joined by
 * apostrophes or hyphens ("don't", "well-known"), with a decimal point or thousands separator
 * between digits ("3.14", "1,000").
 */
const WORD =
  /\p{L}(?:\.\p{L}(?![\p{L}\p{M}]))+\.?|[\p{L}\p{N}][\p{L}\p{M}\p{N}]*(?:(?:['’‐‑-]|(?<=\p{N})\.(?=\p{N})|(?<=\p{N}),(?=\p{N}{3}(?!\p{N})))[\p{L}\p{M}\p{N}]+)*/gu;

export function tokenizeWords(text: string): string[] {
  return text.match(WORD) ?? [];
}

export function hasWord(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}

/** Titles and Latin abbreviations that are followed by more of the same sentence. */
const NEVER_FINAL = new Set([
  "capt",
  "cf",
  "col",
  "dr",
  "e.g",
  "gen",
  "gov",
  "hon",
  "i.e",
  "lt",
  "messrs",
  "mr",
  "mrs",
  "ms",
  "mt",
  "pres",
  "prof",
  "rep",
  "rev",
  "sen",
  "sgt",
  "viz",
  "vs",
]);

/** Abbreviations that end a sentence only when a capital letter follows ("etc. Then"). */
const FINAL_BEFORE_CAPITAL = new Set([
  "al",
  "approx",
  "ave",
  "ca",
  "co",
  "corp",
  "dept",
  "est",
  "etc",
  "fig",
  "inc",
  "jr",
  "ltd",
  "no",
  "pp",
  "sr",
  "st",
  "vol",
]);

const TERMINATOR = /[.!?…]+["'”’»)\]]*(?=\s|$)/g;
const LIST_MARKER = /^\s*(?:[-*+•]|\d{1,3}[.)])\s+/;
const HEADING = /^\s*#{1,6}\s+/;
const WORD_CHAR = /[\p{L}\p{N}.'’-]/u;

/**
 * Sentences of a text. Blank lines, Markdown headings and list items always start a new
 * sentence, so a title or a bullet without a full stop still counts as one. Pieces without a
 * word ("...", "!!!") are not sentences.
 */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  for (const block of blocksOf(text)) {
    let start = 0;
    for (const match of block.matchAll(TERMINATOR)) {
      const end = match.index + match[0].length;
      if (endsSentence(block, match.index, match[0], end)) {
        pushSentence(sentences, block.slice(start, end));
        start = end;
      }
    }
    pushSentence(sentences, block.slice(start));
  }
  return sentences;
}

function pushSentence(sentences: string[], piece: string): void {
  const sentence = piece.trim();
  if (hasWord(sentence)) sentences.push(sentence);
}

/** Paragraphs, headings and list items: boundaries no punctuation is needed for. */
function blocksOf(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  const flush = () => {
    if (current.length > 0) blocks.push(current.join("\n"));
    current = [];
  };
  for (const line of text.split(/\r\n?|\n/)) {
    if (line.trim() === "") {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      current.push(line.slice(heading[0].length));
      flush();
      continue;
    }
    const item = LIST_MARKER.exec(line);
    if (item) {
      flush();
      current.push(line.slice(item[0].length));
      continue;
    }
    current.push(line);
  }
  flush();
  return blocks;
}

function endsSentence(block: string, at: number, run: string, end: number): boolean {
  const marks = run.replace(/["'”’»)\]]+$/, "");
  const closed = marks.length < run.length;
  const next = nextLetter(block, end);
  if (next === undefined) return true;

  if (/[!?]/.test(marks)) {
    // '"Who?" she asked.' goes on; "Who? She left." does not.
    return !(closed && isLower(next));
  }
  if (marks.length > 1 || marks === "…") {
    // An ellipsis pauses a sentence unless a new one visibly starts.
    return isUpper(next);
  }

  const word = wordBefore(block, at);
  const key = word.toLowerCase();
  if (NEVER_FINAL.has(key)) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // an initial: "John F. Kennedy"
  if (FINAL_BEFORE_CAPITAL.has(key) || /\p{L}\.\p{L}/u.test(word)) return isUpper(next);
  return true;
}

/** The first character of what follows, past spaces and opening quotes or brackets. */
function nextLetter(block: string, from: number): string | undefined {
  for (let i = from; i < block.length; i++) {
    const c = block[i] as string;
    if (!/[\s"'“‘«([]/.test(c)) return c;
  }
  return undefined;
}

/** The word a full stop follows, scanning back a bounded distance to stay linear. */
function wordBefore(block: string, at: number): string {
  let i = at;
  while (i > 0 && at - i < 40 && WORD_CHAR.test(block[i - 1] as string)) i--;
  return block.slice(i, at).replace(/^[.'’-]+/, "");
}

function isUpper(c: string): boolean {
  return /\p{Lu}/u.test(c);
}

function isLower(c: string): boolean {
  return /\p{Ll}/u.test(c);
}
