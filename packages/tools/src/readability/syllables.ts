/**
 * English syllable estimates for readability formulas. Orthographic rules plus a short list of
 * exceptions: good enough for Flesch scores, which only need a fair count over many words, not
 * a pronouncing dictionary.
 */

/** Words the rules get wrong that are common enough to matter. */
const EXCEPTIONS: ReadonlyMap<string, number> = new Map([
  ["abalone", 4],
  ["acme", 2],
  ["acne", 2],
  ["adobe", 3],
  ["aisle", 1],
  ["anemone", 4],
  ["apostrophe", 4],
  ["argue", 2],
  ["behavior", 3],
  ["behaviour", 3],
  ["business", 2],
  ["cashier", 2],
  ["cafe", 2],
  ["catastrophe", 4],
  ["cliche", 2],
  ["colonel", 2],
  ["coyote", 3],
  ["epitome", 4],
  ["evening", 2],
  ["every", 2],
  ["facsimile", 4],
  ["fiance", 3],
  ["fiancee", 3],
  ["frontier", 2],
  ["finale", 3],
  ["hyperbole", 4],
  ["isle", 1],
  ["karate", 3],
  ["maybe", 2],
  ["naive", 2],
  ["onion", 2],
  ["people", 2],
  ["poem", 2],
  ["poet", 2],
  ["poetry", 3],
  ["priest", 1],
  ["psyche", 2],
  ["recipe", 3],
  ["savior", 2],
  ["segue", 2],
  ["sesame", 3],
  ["soldier", 2],
  ["simile", 3],
  ["ukulele", 4],
  ["wednesday", 2],
]);

/** Abbreviations written without dots, counted as they are spoken. */
const SPOKEN_ABBREVIATIONS: ReadonlyMap<string, number> = new Map([
  ["dr", 2],
  ["etc", 4],
  ["jr", 2],
  ["mr", 2],
  ["mrs", 2],
  ["ms", 1],
  ["mt", 1],
  ["prof", 3],
  ["sr", 2],
  ["st", 1],
  ["vs", 2],
]);

/**
 * Stems that end in a silent "e" and start many compounds ("sometimes", "typescript"). Counting
 * the stem and the rest separately keeps that "e" silent.
 */
const SILENT_E_STEMS = [
  "base",
  "care",
  "case",
  "code",
  "face",
  "fire",
  "home",
  "house",
  "life",
  "like",
  "more",
  "name",
  "note",
  "place",
  "safe",
  "side",
  "some",
  "space",
  "state",
  "stone",
  "store",
  "there",
  "time",
  "type",
  "whole",
] as const;

/** Adjacent vowels that belong to two syllables ("di-al", "li-on", "cru-el"), each +1. */
const HIATUS_PATTERNS: readonly RegExp[] = [
  /(?<![cgst])ia|(?<=g)ia(?!n?s?$)/g, // dial, media, giant; not special, Asia, Georgia
  /(?<![cgnstx]|ll)io/g, // lion, radio; not nation, region, anxious, union, million
  /eo(?!u)/g, // video, rodeo, geology; not courageous
  /(?<![cg])eou/g, // simultaneous, erroneous; not gorgeous, herbaceous
  /(?<![gq])ua(?![ds])/g, // dual, actual, usual; not guard, persuade
  /(?<!q)uo/g, // duo, fluorescent
  /iu/g, // medium, stadium
  /(?<![ct])ie(?=t|st|nt|nce|n$)/g, // quiet, happiest, client, audience, alien; not patient
  /ie(?<=[aeiouy][^aeiouy]{1,4}ie)(?=rs?$)/g, // happier, earlier; not pier
  /(?<![gq])ue(?=[lnt]|st)/g, // cruel, fluent, duet, truest; not guest
  /e(?=um$|us$)/g, // museum, nucleus
  /[aeiou](?=ing$)/g, // going, being, seeing
  /(?<=[^aeiou])y(?=ing$)/g, // flying, crying
  /ea(?<=[aeiouy][^aeiouy]{1,4}ea)(?=s?$)/g, // idea, area; not sea
  /[aeiou]sms?$/g, // criticism, sarcasm
  /^sci(?=e)/g, // science, scientist
  /^creat(?!ur)/g, // create, creation; not creature
  /^react/g,
  /^reali/g,
  /^ideal/g,
  /^theat/g,
  /^co(?=op|ord|ex|ed|au)/g, // cooperate, coordinate, coexist
];

/** A silent "e" before a suffix ("lovely", "movement", "hopeful"), each −1. */
const SILENT_E_BEFORE_SUFFIX = /[aeiouy][^aeiouy]e(?=ly$|ment|ful|less|ness)/g;
/** "element", "tenement": the "e" before the suffix is pronounced there. */
const SPOKEN_E_BEFORE_MENT = /(?<![aeiouy])e[^aeiouy]e(?=ment)/g;

const ONES = [2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 3, 1, 2, 2, 2, 2, 3, 2, 2] as const; // zero..nineteen
const TENS = [0, 0, 2, 2, 2, 2, 2, 3, 2, 2] as const; // twenty..ninety
/** Spoken length of thousand, million, billion, trillion, quadrillion. */
const SCALES = [0, 2, 2, 2, 2, 3] as const;

/** Syllables in one word token: letters, digits, and internal apostrophes, hyphens or dots. */
export function countSyllables(token: string): number {
  const word = token.replace(/’/g, "'").replace(/[‐‑]/g, "-");
  if (word.includes("-")) {
    return sumOver(word.split("-").filter((part) => part.length > 0));
  }
  if (/\p{N}/u.test(word)) return countWithDigits(word);
  if (/^\p{L}(?:\.\p{L})+\.?$/u.test(word)) {
    // "e.g.", "U.S.A.": read letter by letter.
    return spelledOut(word.replace(/\./g, ""));
  }
  const letters = word.replace(/\./g, "");
  if (isInitialism(letters)) return spelledOut(letters);
  return countLetters(letters);
}

function sumOver(parts: readonly string[]): number {
  let total = 0;
  for (const part of parts) total += countSyllables(part);
  return Math.max(1, total);
}

/** "HTML", "CSS", "FBI": short all-caps tokens, or longer ones without vowels, are spelled. */
function isInitialism(word: string): boolean {
  if (word.length < 2 || word !== word.toUpperCase() || word === word.toLowerCase()) {
    return false;
  }
  return word.length <= 3 || !/[AEIOUY]/.test(word);
}

function spelledOut(letters: string): number {
  let total = 0;
  for (const letter of letters) total += letter.toLowerCase() === "w" ? 3 : 1;
  return Math.max(1, total);
}

function countLetters(raw: string): number {
  // An accented final "é" (café, cliché) is a syllable of its own.
  const accentedFinalE = /é$/i.test(raw);
  let word = raw
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z']/g, "");

  let extra = 0;
  const contraction = /^(.+)n't$/.exec(word);
  if (contraction?.[1] && !/[aeiouy]$/.test(contraction[1])) {
    // "didn't", "isn't": the "n't" is its own syllable after a consonant.
    extra = 1;
  }
  word = word.replace(/'/g, "");
  if (word.length === 0) return 1;

  const spoken = SPOKEN_ABBREVIATIONS.get(word);
  if (spoken !== undefined && raw !== raw.toUpperCase()) return spoken;
  const known = EXCEPTIONS.get(word);
  if (known !== undefined) return known + extra;
  const plural = /^(.+)s$/.exec(word);
  const pluralOf = plural?.[1] ? EXCEPTIONS.get(plural[1]) : undefined;
  if (pluralOf !== undefined) return pluralOf + extra;

  for (const stem of SILENT_E_STEMS) {
    const rest = word.slice(stem.length);
    if (word.startsWith(stem) && rest.length >= 2 && /[aeiouy]/.test(rest)) {
      return countLetters(stem) + countLetters(rest) + extra;
    }
  }

  return Math.max(1, englishRules(word) + (accentedFinalE ? 1 : 0) + extra);
}

function englishRules(word: string): number {
  const vowel = classifyVowels(word);
  let groups = 0;
  for (let i = 0; i < word.length; i++) {
    if (vowel[i] && !vowel[i - 1]) groups++;
  }
  let count = groups;

  for (const pattern of HIATUS_PATTERNS) {
    count += word.match(pattern)?.length ?? 0;
  }
  count -= word.match(SILENT_E_BEFORE_SUFFIX)?.length ?? 0;
  count += word.match(SPOKEN_E_BEFORE_MENT)?.length ?? 0;

  // Only an "e" that forms its own vowel group can be silent ("make", not "free").
  const ownGroupE = (at: number): boolean =>
    word[at] === "e" && vowel[at] === true && !vowel[at - 1] && at > 0;
  const n = word.length;
  if (groups > 1) {
    if (ownGroupE(n - 1) && !endsWithSpokenE(word, n - 1)) {
      count--; // make, fire, whole
    } else if (/es$/.test(word) && ownGroupE(n - 2) && !endsWithSpokenE(word, n - 2)) {
      if (!/(?:[sxz]|[cs]h|[cg])es$/.test(word)) count--; // makes, not boxes or pages
    } else if (/ed$/.test(word) && ownGroupE(n - 2) && !endsWithSpokenE(word, n - 2)) {
      if (!/[td]ed$/.test(word)) count--; // jumped, not wanted
    }
  }
  // "league", "tongue", "vague": the final "ue" is silent.
  if (/gue$/.test(word) && count > 1) count--;

  return count;
}

/** "table", "acre", "bottled", "hundred": consonant + l/r + e keeps the "e" spoken. */
function endsWithSpokenE(word: string, eAt: number): boolean {
  const liquid = word[eAt - 1];
  const before = word[eAt - 2];
  if (liquid !== "l" && liquid !== "r") return false;
  if (before === undefined || /[aeiouy]/.test(before) || before === liquid) return false;
  // "mile", "scale": a vowel before l/r makes the "e" silent; "aisle" is an exception.
  return true;
}

/**
 * Which letters act as vowels. "u" after "q" is a consonant ("quiet", "queue"); "y" is a
 * consonant at the start before a vowel ("yes") and between vowels ("player", "loyal").
 */
function classifyVowels(word: string): boolean[] {
  const result: boolean[] = [];
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    if ("aeio".includes(c)) {
      result.push(true);
    } else if (c === "u") {
      result.push(word[i - 1] !== "q");
    } else if (c === "y") {
      const next = word[i + 1];
      const nextIsVowel = next !== undefined && "aeiou".includes(next);
      const prevIsVowel = i > 0 && result[i - 1] === true;
      result.push(!(nextIsVowel && (i === 0 || prevIsVowel)));
    } else {
      result.push(false);
    }
  }
  return result;
}

/** Tokens with digits: numbers read aloud, letters around them counted as words. */
function countWithDigits(word: string): number {
  const plain = word.replace(/'/g, "");
  if (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(plain)) return countNumber(plain.replace(/,/g, ""));
  if (/^\d+(?:\.\d+)?$/.test(plain)) return countNumber(plain);
  let total = 0;
  for (const part of plain.match(/\d+(?:\.\d+)?|\p{L}+/gu) ?? []) {
    if (/^\d/.test(part)) total += countNumber(part);
    // "1st", "2nd", "90s": an ordinal or plural ending adds no syllable of its own.
    else if (!/^(?:st|nd|rd|th|s)$/i.test(part)) total += countSyllables(part);
  }
  return Math.max(1, total);
}

function countNumber(digits: string): number {
  const [whole = "", fraction] = digits.split(".");
  let total = countWhole(whole);
  if (fraction !== undefined) {
    total += 1; // "point"
    for (const d of fraction) total += ONES[Number(d)] ?? 1;
  }
  return total;
}

function countWhole(digits: string): number {
  // Codes, phone numbers and zero-padded numbers are read digit by digit.
  if (digits.length > 15 || (digits.length > 1 && digits.startsWith("0"))) {
    let total = 0;
    for (const d of digits) total += ONES[Number(d)] ?? 1;
    return total;
  }
  const n = Number(digits);
  if (digits.length === 4 && n >= 1100 && n <= 2099 && !(n >= 2000 && n <= 2009)) {
    // Years: "nineteen eighty-four", "twenty twenty-six", "nineteen oh five".
    const high = Math.floor(n / 100);
    const low = n % 100;
    if (low === 0) return belowHundred(high) + 2;
    if (low < 10) return belowHundred(high) + 1 + belowHundred(low);
    return belowHundred(high) + belowHundred(low);
  }
  return cardinal(n);
}

function cardinal(n: number): number {
  if (n === 0) return ONES[0];
  let total = 0;
  let scale = 0;
  let rest = n;
  while (rest > 0) {
    const group = rest % 1000;
    if (group > 0) total += belowThousand(group) + (SCALES[scale] ?? 3);
    rest = Math.floor(rest / 1000);
    scale++;
  }
  return total;
}

function belowThousand(n: number): number {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  return (hundreds > 0 ? (ONES[hundreds] ?? 1) + 2 : 0) + (rest > 0 ? belowHundred(rest) : 0);
}

function belowHundred(n: number): number {
  if (n < 20) return ONES[n] ?? 1;
  const ones = n % 10;
  return (TENS[Math.floor(n / 10)] ?? 2) + (ones > 0 ? (ONES[ones] ?? 1) : 0);
}
