import { describe, expect, it } from "vitest";
import { hasWord, splitSentences, tokenizeWords } from "./text";

describe("tokenizeWords", () => {
  it("keeps apostrophes and hyphens inside words", () => {
    expect(tokenizeWords("Don't stop: it’s a well-known trick.")).toEqual([
      "Don't",
      "stop",
      "it’s",
      "a",
      "well-known",
      "trick",
    ]);
  });

  it("keeps decimals, thousands and dotted abbreviations whole", () => {
    expect(tokenizeWords("Pi is 3.14, e.g. 1,000 times in the U.S.A.")).toEqual([
      "Pi",
      "is",
      "3.14",
      "e.g.",
      "1,000",
      "times",
      "in",
      "the",
      "U.S.A.",
    ]);
  });

  it("splits a comma-separated list of numbers into separate words", () => {
    expect(tokenizeWords("1,2,3")).toEqual(["1", "2", "3"]);
  });

  it("ignores punctuation, symbols and trailing apostrophes", () => {
    expect(tokenizeWords("-- ... !!! (horses') & 50%")).toEqual(["horses", "50"]);
  });

  it("reads accented letters as part of the word", () => {
    expect(tokenizeWords("a naïve café")).toEqual(["a", "naïve", "café"]);
  });
});

describe("hasWord", () => {
  it("is false for punctuation and whitespace only", () => {
    expect(hasWord(" ...!? \n\t-- ")).toBe(false);
    expect(hasWord("...a")).toBe(true);
    expect(hasWord("42")).toBe(true);
  });
});

describe("splitSentences", () => {
  it("splits at full stops, question marks and exclamation marks", () => {
    expect(splitSentences("It rained. Did it stop? No! It poured.")).toEqual([
      "It rained.",
      "Did it stop?",
      "No!",
      "It poured.",
    ]);
  });

  it("treats text without terminal punctuation as one sentence", () => {
    expect(splitSentences("a line with no full stop")).toEqual(["a line with no full stop"]);
  });

  it("does not split after titles or Latin abbreviations", () => {
    expect(
      splitSentences("Dr. Smith met Mr. Jones, e.g. at lunch, i.e. daily. They talked."),
    ).toEqual(["Dr. Smith met Mr. Jones, e.g. at lunch, i.e. daily.", "They talked."]);
  });

  it("does not split inside decimals, versions or domain names", () => {
    expect(splitSentences("Pi is about 3.14 and v1.2.3 ships from example.com today.")).toEqual([
      "Pi is about 3.14 and v1.2.3 ships from example.com today.",
    ]);
  });

  it("does not split after an initial", () => {
    expect(splitSentences("John F. Kennedy spoke. J. R. R. Tolkien wrote.")).toEqual([
      "John F. Kennedy spoke.",
      "J. R. R. Tolkien wrote.",
    ]);
  });

  it("ends a sentence after etc. or a.m. only when a capital letter follows", () => {
    expect(
      splitSentences("Bring pens, paper, etc. and a bag. We start at 9 a.m. Be early."),
    ).toEqual(["Bring pens, paper, etc. and a bag.", "We start at 9 a.m.", "Be early."]);
  });

  it("ends a sentence at a number followed by a full stop", () => {
    expect(splitSentences("We shipped version 2.0. Next comes 3.")).toEqual([
      "We shipped version 2.0.",
      "Next comes 3.",
    ]);
  });

  it("continues after an ellipsis unless a capital letter follows", () => {
    expect(splitSentences("Wait... what was that? I waited… Then it came.")).toEqual([
      "Wait... what was that?",
      "I waited…",
      "Then it came.",
    ]);
  });

  it("keeps a quoted question inside the sentence that reports it", () => {
    expect(splitSentences('"Who?" she asked. "Me!" He laughed.')).toEqual([
      '"Who?" she asked.',
      '"Me!"',
      "He laughed.",
    ]);
  });

  it("starts a new sentence at blank lines, headings and list items", () => {
    expect(
      splitSentences("# Release notes\n\nFaster start\nand less memory\n- new icons\n2. dark mode"),
    ).toEqual(["Release notes", "Faster start\nand less memory", "new icons", "dark mode"]);
  });

  it("drops pieces without words", () => {
    expect(splitSentences("Hello. ... !!! ?")).toEqual(["Hello."]);
  });
});
