import { testToolContext } from "@toolbus/core/testing";
import { toolSpecOf } from "@toolbus/core/tool-definition";
import { toolSpec } from "@toolbus/wire/model";
import { describe, expect, it } from "vitest";
import { analyzeReadability, interpret, round } from "./analyze";
import { readabilityAnalyzer, readabilityInput, readabilityOutput } from "./readability-analyzer";

const context = testToolContext(undefined, { now: () => new Date("2026-01-15T12:00:00Z") });

async function analyze(text: string) {
  return readabilityAnalyzer.execute(readabilityInput.parse({ text }), context);
}

describe("readability_analyzer", () => {
  it("scores a one-sentence text of one-syllable words", async () => {
    const { data } = await analyze("The cat sat on the mat.");
    expect(data).toEqual({
      sentences: 1,
      words: 6,
      syllables: 6,
      characters: 17,
      avgWordsPerSentence: 6,
      avgSyllablesPerWord: 1,
      // 206.835 − 1.015 × 6 − 84.6 × 1 = 116.145; 0.39 × 6 + 11.8 × 1 − 15.59 = −1.45
      fleschReadingEase: 116.1,
      fleschKincaidGrade: -1.5,
      readingTimeSeconds: 1.5,
      interpretation: "very_easy",
    });
  });

  it("scores a two-sentence text against hand-counted syllables", () => {
    // I(1) like(1) green(1) ap-ples(2). They(1) taste(1) sweet(1) and(1) fresh(1).
    expect(analyzeReadability("I like green apples. They taste sweet and fresh.")).toMatchObject({
      sentences: 2,
      words: 9,
      syllables: 10,
      avgWordsPerSentence: 4.5,
      avgSyllablesPerWord: 1.11,
      // 206.835 − 1.015 × 4.5 − 84.6 × 10/9 = 108.2675
      fleschReadingEase: 108.3,
      // 0.39 × 4.5 + 11.8 × 10/9 − 15.59 = −0.7239
      fleschKincaidGrade: -0.7,
    });
  });

  it("rates dense polysyllabic prose as very difficult", () => {
    // com-mit-tee post-poned its de-ci-sion. Un-for-tu-nate-ly the doc-u-men-ta-tion
    // re-mained in-com-plete: 26 syllables in 10 words.
    const metrics = analyzeReadability(
      "The committee postponed its decision. Unfortunately, the documentation remained incomplete.",
    );
    expect(metrics).toMatchObject({
      sentences: 2,
      words: 10,
      syllables: 26,
      avgSyllablesPerWord: 2.6,
      // 206.835 − 1.015 × 5 − 84.6 × 2.6 = −18.2; 0.39 × 5 + 11.8 × 2.6 − 15.59 = 17.04
      fleschReadingEase: -18.2,
      fleschKincaidGrade: 17,
      interpretation: "very_difficult",
    });
  });

  it("does not end sentences at abbreviations or decimals", () => {
    const metrics = analyzeReadability(
      "Dr. Lee paid $3.50 for tea, e.g. green tea. Mr. Wu paid more.",
    );
    expect(metrics.sentences).toBe(2);
  });

  it("counts capitalised text like the same text in lower case", () => {
    const shouted = analyzeReadability("THE CAT SAT ON THE MAT.");
    expect(shouted).toEqual(analyzeReadability("The cat sat on the mat."));
  });

  it("gives the same result for the same text every time", async () => {
    const text = "Readability scores should never drift. Run them twice; compare the results!";
    const first = await analyze(text);
    const second = await analyze(text);
    expect(second).toEqual(first);
  });

  // Speed on these inputs is measured by `npm run bench`, not asserted here.
  it("analyses the largest allowed text", async () => {
    const paragraph =
      "Dr. Ada wrote 3.14 lines, e.g. short ones. Then she rested... Did it work? Yes! ";
    const text = paragraph.repeat(Math.floor(100_000 / paragraph.length));
    const { data } = await analyze(text);
    expect(data.sentences).toBe(4 * Math.floor(100_000 / paragraph.length));
  });

  it("analyses pathological input such as one 100,000-letter word", async () => {
    const word = await analyze(`${"b".repeat(50_000)}${"e".repeat(50_000)}`);
    expect(word.data).toMatchObject({ words: 1, sentences: 1 });
    const tiny = await analyze("a. ".repeat(33_000));
    expect(tiny.data.words).toBe(33_000);
  });

  it("reports its numbers and band in the text for the model", async () => {
    const { output } = await analyze("The cat sat on the mat.");
    expect(output).toContain("Flesch reading ease 116.1 (very easy)");
    expect(output).toContain("Flesch-Kincaid grade -1.5");
    expect(output).toContain("1 sentence, 6 words, 6 syllables");
    expect(output).toContain("about 2 seconds at 238 words per minute");
  });

  it("returns data that matches its output schema", async () => {
    // The spec's two examples: without them the loop below would check nothing.
    const examples = readabilityAnalyzer.spec.examples ?? [];
    expect(examples).toHaveLength(2);
    for (const example of examples) {
      const { data } = await readabilityAnalyzer.execute(
        readabilityInput.parse(example.input),
        context,
      );
      expect(readabilityOutput.safeParse(data).success).toBe(true);
    }
  });

  describe("input schema", () => {
    it("rejects text without a single word so the API answers 400", () => {
      const result = readabilityInput.safeParse({ text: " ... !? -- \n" });
      expect(result.success).toBe(false);
      expect(result.error?.issues).toEqual([
        expect.objectContaining({ path: ["text"], message: "text must contain at least one word" }),
      ]);
    });

    it("rejects empty and oversized text and unknown fields", () => {
      expect(readabilityInput.safeParse({ text: "" }).success).toBe(false);
      expect(readabilityInput.safeParse({ text: "a".repeat(100_001) }).success).toBe(false);
      expect(readabilityInput.safeParse({ text: "Hi.", language: "en" }).success).toBe(false);
    });

    it("accepts every example in the spec", () => {
      const examples = readabilityAnalyzer.spec.examples ?? [];
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples) {
        expect(readabilityInput.safeParse(example.input).success).toBe(true);
      }
    });
  });

  it("publishes a valid catalog spec with JSON Schema input and output", () => {
    const spec = toolSpecOf(readabilityAnalyzer);
    expect(toolSpec.parse(spec)).toEqual(spec);
    expect(spec).toMatchObject({
      id: "readability_analyzer",
      toolset: "text_analysis",
      category: "enhance",
      optionality: "optional",
      requires: [],
      setup: [],
      annotations: { readOnly: true, openWorld: false, idempotent: true },
    });
    expect(spec.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string", minLength: 1, maxLength: 100_000 } },
      required: ["text"],
      additionalProperties: false,
    });
    expect(spec.outputSchema).toMatchObject({
      type: "object",
      properties: { interpretation: { enum: expect.arrayContaining(["very_easy"]) } },
    });
    expect(spec.guidelines.do.length).toBeGreaterThanOrEqual(3);
    expect(spec.guidelines.dont.length).toBeGreaterThanOrEqual(3);
  });
});

describe("interpret", () => {
  it.each([
    [120, "very_easy"],
    [90, "very_easy"],
    [89.9, "easy"],
    [80, "easy"],
    [75, "fairly_easy"],
    [60, "standard"],
    [59.9, "fairly_difficult"],
    [50, "fairly_difficult"],
    [30, "difficult"],
    [29.9, "very_difficult"],
    [-40, "very_difficult"],
  ] as const)("puts a reading ease of %d in the %s band", (score, band) => {
    expect(interpret(score)).toBe(band);
  });
});

describe("round", () => {
  it("rounds halves away from zero despite floating point noise", () => {
    expect(round(2.34 + 11.8 - 15.59, 1)).toBe(-1.5);
    expect(round(1.005, 2)).toBe(1.01);
    expect(round(-0.04, 1)).toBe(0);
    expect(Object.is(round(-0.04, 1), -0)).toBe(false);
  });
});
