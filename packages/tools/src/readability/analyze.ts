import type { Interpretation, ReadabilityMetrics } from "./metrics";
import { WORDS_PER_MINUTE } from "./metrics";
import { countSyllables } from "./syllables";
import { splitSentences, tokenizeWords } from "./text";

/** Counts and Flesch scores of English prose. Callers guarantee at least one word. */
export function analyzeReadability(text: string): ReadabilityMetrics {
  const tokens = tokenizeWords(text);
  const words = tokens.length;
  const sentences = Math.max(1, splitSentences(text).length);
  // Text in capitals throughout is shouting, not a page of acronyms to spell out.
  const lettersOf = (pattern: RegExp) => text.match(pattern)?.length ?? 0;
  const shouting = lettersOf(/\p{Lu}/gu) > 0.7 * lettersOf(/\p{L}/gu);

  let syllables = 0;
  let characters = 0;
  for (const token of tokens) {
    syllables += countSyllables(shouting ? token.toLowerCase() : token);
    characters += token.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
  }

  const wordsPerSentence = words / sentences;
  const syllablesPerWord = syllables / words;
  const ease = round(206.835 - 1.015 * wordsPerSentence - 84.6 * syllablesPerWord, 1);
  return {
    sentences,
    words,
    syllables,
    characters,
    avgWordsPerSentence: round(wordsPerSentence, 2),
    avgSyllablesPerWord: round(syllablesPerWord, 2),
    fleschReadingEase: ease,
    fleschKincaidGrade: round(0.39 * wordsPerSentence + 11.8 * syllablesPerWord - 15.59, 1),
    readingTimeSeconds: round((words / WORDS_PER_MINUTE) * 60, 1),
    interpretation: interpret(ease),
  };
}

/** Flesch's bands for the reading ease score. */
export function interpret(ease: number): Interpretation {
  if (ease >= 90) return "very_easy";
  if (ease >= 80) return "easy";
  if (ease >= 70) return "fairly_easy";
  if (ease >= 60) return "standard";
  if (ease >= 50) return "fairly_difficult";
  if (ease >= 30) return "difficult";
  return "very_difficult";
}

/**
 * Half away from zero, after trimming binary noise: 2.34 + 11.8 − 15.59 is −1.4499999…
 * in floating point but −1.45 on paper, and should report as −1.5 like the hand calculation.
 */
export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  const scaled = Number((Math.abs(value) * factor).toPrecision(12));
  const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
  return rounded === 0 ? 0 : rounded;
}
