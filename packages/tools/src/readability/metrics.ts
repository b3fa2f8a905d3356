/** What the analysis reports; apart from analyze.ts so the tool's schemas load without it. */

export const INTERPRETATIONS = [
  "very_easy",
  "easy",
  "fairly_easy",
  "standard",
  "fairly_difficult",
  "difficult",
  "very_difficult",
] as const;
export type Interpretation = (typeof INTERPRETATIONS)[number];

/** Adult silent reading speed for non-fiction (Brysbaert, 2019). */
export const WORDS_PER_MINUTE = 238;

export interface ReadabilityMetrics {
  sentences: number;
  words: number;
  syllables: number;
  characters: number;
  avgWordsPerSentence: number;
  avgSyllablesPerWord: number;
  fleschReadingEase: number;
  fleschKincaidGrade: number;
  readingTimeSeconds: number;
  interpretation: Interpretation;
}
