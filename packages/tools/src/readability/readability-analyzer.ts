import { defineTool } from "@toolbus/core/tool-definition";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import * as z from "zod";
import { INTERPRETATIONS, type ReadabilityMetrics, WORDS_PER_MINUTE } from "./metrics";
import { hasWord } from "./text";

// The analysis loads with the first call it runs: a process that only validates calls never
// loads it.
const analysis = onFirstUse(() => import("./analyze"));

export const readabilityInput = z.strictObject({
  text: z
    .string()
    .min(1)
    .max(100_000)
    .refine(hasWord, "text must contain at least one word")
    .describe("English prose to measure, up to 100,000 characters. Leave out code and tables."),
});
export type ReadabilityInput = z.infer<typeof readabilityInput>;

const count = z.number().int().nonnegative();

export const readabilityOutput = z.object({
  sentences: count.describe("Sentences, at least 1; a line without a full stop counts as one."),
  words: count,
  syllables: count.describe("Estimated English syllables."),
  characters: count.describe("Letters and digits in words, without spaces or punctuation."),
  avgWordsPerSentence: z.number().nonnegative(),
  avgSyllablesPerWord: z.number().nonnegative(),
  fleschReadingEase: z
    .number()
    .describe("206.835 − 1.015 × words/sentence − 84.6 × syllables/word; higher is easier."),
  fleschKincaidGrade: z
    .number()
    .describe("0.39 × words/sentence + 11.8 × syllables/word − 15.59: a US school grade."),
  readingTimeSeconds: z
    .number()
    .nonnegative()
    .describe(`Silent reading time at ${WORDS_PER_MINUTE} words per minute.`),
  interpretation: z.enum(INTERPRETATIONS).describe("Flesch's band for the reading ease score."),
});

const LABELS: Record<ReadabilityMetrics["interpretation"], string> = {
  very_easy: "very easy",
  easy: "easy",
  fairly_easy: "fairly easy",
  standard: "standard",
  fairly_difficult: "fairly difficult",
  difficult: "difficult",
  very_difficult: "very difficult",
};

export const readabilityAnalyzer = defineTool({
  spec: {
    id: "readability_analyzer",
    toolset: "text_analysis",
    title: "Readability analyzer",
    description:
      "Measures how hard an English text is to read: sentence, word and syllable counts, " +
      "Flesch reading ease, Flesch-Kincaid grade level and estimated reading time. " +
      "Deterministic and offline; the same text always gives the same numbers.",
    category: "enhance",
    optionality: "optional",
    usageHint:
      "Use on a draft when the reader or a target reading level is known (a grade, " +
      "'plain language', 'for beginners'), or to check that a rewrite made the text easier.",
    guidelines: {
      do: [
        "Measure a finished draft or section against a stated audience or grade level.",
        "Compare the scores before and after a revision to confirm it moved the right way.",
        "Send prose only: take out code blocks, tables and long URLs, which distort the counts.",
        "Shorten long sentences first when the score is too hard: that moves both formulas most.",
      ],
      dont: [
        "Don't read the score as a verdict on quality: it measures sentence and word length only.",
        "Don't measure a sentence or two; the formulas need a paragraph or more to mean much.",
        "Don't use it on languages other than English: the syllable rules are English.",
        "Don't swap precise technical terms for vague ones just to gain points.",
      ],
    },
    requires: [],
    produces: ["metrics"],
    examples: [
      {
        title: "Check a product announcement before publishing",
        input: {
          text:
            "Today we are releasing version 2.0. It starts twice as fast and uses less " +
            "memory. Upgrading takes one command, and your settings stay as they are.",
        },
      },
      {
        title: "Measure a dense technical paragraph",
        input: {
          text:
            "Idempotent request handling, implemented through conditional writes keyed by a " +
            "caller-supplied identifier, guarantees that retried deliveries produce no " +
            "duplicate side effects, irrespective of the underlying transport's semantics.",
        },
      },
    ],
    timeoutMs: 5_000,
    annotations: { readOnly: true, openWorld: false, idempotent: true },
    setup: [],
    version: "1",
  },
  // Computes from its input alone: no capability to check, no network, no secret.
  needs: { detectors: [] },
  input: readabilityInput,
  output: readabilityOutput,
  async execute(input) {
    const { analyzeReadability } = await analysis();
    const metrics = analyzeReadability(input.text);
    return { output: describe(metrics), data: metrics };
  },
});

function describe(m: ReadabilityMetrics): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const seconds = Math.max(1, Math.round(m.readingTimeSeconds));
  const time =
    seconds < 90 ? plural(seconds, "second", "seconds") : `${Math.round(seconds / 60)} minutes`;
  return [
    `Flesch reading ease ${m.fleschReadingEase} (${LABELS[m.interpretation]}); ` +
      `Flesch-Kincaid grade ${m.fleschKincaidGrade}.`,
    `${plural(m.sentences, "sentence", "sentences")}, ${plural(m.words, "word", "words")}, ` +
      `${plural(m.syllables, "syllable", "syllables")}: ${m.avgWordsPerSentence} words per ` +
      `sentence, ${m.avgSyllablesPerWord} syllables per word.`,
    `Reading time about ${time} at ${WORDS_PER_MINUTE} words per minute.`,
  ].join("\n");
}
