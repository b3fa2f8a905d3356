import { describe, expect, it } from "vitest";
import { term } from "./terms";
import { words } from "./words";

/** The terms a text is searched under, stop words dropped. */
const terms = (text: string) => words(text).flatMap((word) => term(word) ?? []);

describe("words as an agent writes them", () => {
  it("drops the clitic of a possessive or contraction instead of keeping it as a word", () => {
    expect(words("what's today's price for the team's plan")).toEqual([
      "what",
      "today",
      "price",
      "for",
      "the",
      "team",
      "plan",
    ]);
    // Curly and modifier apostrophes, as pasted text has them.
    expect(words("today’s report, todayʼs report")).toEqual(["today", "report", "today", "report"]);
    expect(words("you've we'll they're I'd I'm")).toEqual(["you", "we", "they", "i", "i"]);
  });

  it("reads n't as the verb it negates", () => {
    expect(words("don't doesn't isn't can't won't shan't")).toEqual([
      "do",
      "does",
      "is",
      "can",
      "will",
      "shall",
    ]);
  });

  it("never leaves a one- or two-letter fragment of a contraction as a term", () => {
    const found = terms(
      "What's the weather? You've said it's today's; don't, can't, won't, I'd, we're, they'll, team's",
    );
    expect(found).toEqual(["weather", "said", "todai", "team"]);
    expect(found.filter((found) => found.length <= 2)).toEqual([]);
  });

  it("drops the words that introduce a name, so a name's call is not a tool's call", () => {
    expect(terms("a namespace called team-a, a branch named fix")).toEqual([
      "namespac",
      "team",
      "branch",
      "fix",
    ]);
  });

  it("keeps other apostrophes as separators and quotes out of words", () => {
    expect(words("o'clock 'quoted' users' data")).toEqual([
      "o",
      "clock",
      "quoted",
      "users",
      "data",
    ]);
  });

  it("splits snake_case names into their words and keeps the whole name after them", () => {
    expect(words("create_issue")).toEqual(["create", "issue", "create_issue"]);
    expect(words("list__things _private trailing_")).toEqual([
      "list",
      "things",
      "private",
      "trailing",
    ]);
  });

  it("splits camelCase names into their words, acronyms kept together, and keeps the whole", () => {
    expect(words("slackListChannels")).toEqual(["slack", "list", "channels", "slacklistchannels"]);
    expect(words("getHTTPResponse")).toEqual(["get", "http", "response", "gethttpresponse"]);
    expect(words("s3Bucket GitHub")).toEqual(["s3", "bucket", "s3bucket", "git", "hub", "github"]);
    // A plural of an acronym and a lone lowercase letter are not words of their own.
    expect(words("URLs IDs iPhone")).toEqual(["urls", "ids", "phone", "iphone"]);
    // All lowercase or all capitals: one word.
    expect(words("Weather API")).toEqual(["weather", "api"]);
  });

  it("splits hyphenated raw names into words", () => {
    expect(words("hubspot-get-user-details API-get-user")).toEqual([
      "hubspot",
      "get",
      "user",
      "details",
      "api",
      "get",
      "user",
    ]);
  });

  it("stays linear on long runs of separators and humps", () => {
    const long = `${"a_".repeat(50_000)}${"aB".repeat(50_000)}${"a'".repeat(50_000)}`;
    const start = performance.now();
    expect(words(long).length).toBeGreaterThan(0);
    expect(performance.now() - start).toBeLessThan(2_000);
  });
});
