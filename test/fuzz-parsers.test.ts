import { IcsFormatError, occurrencesInWindow, parseIcs } from "@toolbus/tools/calendar";
import { parseFeed } from "@toolbus/tools/rss-feed";
import { parseDuckDuckGoHtml } from "@toolbus/tools/web-search";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../packages/tools/src/text/html";

// Documents stitched from the pieces hostile input is made of (unclosed tags and quotes,
// references, CDATA, NUL, lone surrogates): every parser returns, without throwing anything
// but its own format error, and its text is clean.

const piece = <T extends string>(...pieces: T[]) =>
  fc.oneof(
    fc.constantFrom(...pieces),
    fc.string({ maxLength: 8 }),
    fc.string({ unit: "binary", maxLength: 4 }),
  );

/** What hostile markup is made of, whatever the format. */
const HOSTILE = [
  "<",
  ">",
  "</",
  "/>",
  '"',
  "'",
  "=",
  "<p>",
  "</p>",
  "<script>",
  "</script>",
  "<!--",
  "-->",
  "<![CDATA[",
  "]]>",
  "&",
  "&amp;",
  "&eacute;",
  "&#0;",
  "&#xD800;",
  "\u0000",
  "\ud800",
  "\udc00",
  " ",
  "word",
];

const markup = fc
  .array(piece(...HOSTILE, '<div class="result">', '<a class="result__a" href="'), {
    maxLength: 60,
  })
  .map((parts) => parts.join(""));

/**
 * Hostile text without the pieces that make up a result (`div.result`, `a.result__a`): what a
 * title or snippet of a real results page could hold.
 */
const resultText = fc
  .array(piece(...HOSTILE, "<b>", "</b>"), { maxLength: 12 })
  .map((parts) => parts.join(""));

/** Where result `i` links: directly, or through DuckDuckGo's redirector as the real page does. */
const resultUrl = (i: number) => `https://r${i}.example/`;
const resultHref = (i: number, redirected: boolean) =>
  redirected
    ? `//duckduckgo.com/l/?uddg=${encodeURIComponent(resultUrl(i))}&amp;rut=x`
    : resultUrl(i);

/**
 * A results page: every result a well-formed skeleton around hostile title and snippet text,
 * each title opening with its result's number. Hostile text can still swallow what follows it
 * (an unclosed comment or script), so a page yields some of its results, not always all.
 */
const resultsPage = fc
  .tuple(
    resultText,
    fc.array(fc.record({ title: resultText, snippet: resultText, redirected: fc.boolean() }), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([before, results]) => ({
    count: results.length,
    html:
      `<div id="links">${before}` +
      results
        .map(
          ({ title, snippet, redirected }, i) =>
            `<div class="result"><a class="result__a" href="${resultHref(i, redirected)}">R${i} ${title}</a>` +
            `<a class="result__snippet">${snippet}</a></div>`,
        )
        .join(""),
  }));

const icsLine = fc
  .array(
    piece(
      "BEGIN:VEVENT",
      "END:VEVENT",
      "DTSTART:20260110T090000Z",
      "DTSTART;TZID=W. Europe Standard Time:20260110T090000",
      "RRULE:FREQ=MONTHLY;BYDAY=2TU",
      "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
      "RRULE:FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=-1",
      "RDATE:20260120T090000Z,x",
      "EXDATE:20260110T090000Z",
      "RECURRENCE-ID:20260110T090000Z",
      "SUMMARY:<b>x",
      ";",
      ":",
      "=",
      '"',
    ),
    { maxLength: 12 },
  )
  .map((lines) => `BEGIN:VCALENDAR\r\n${lines.join("\r\n")}\r\nEND:VCALENDAR\r\n`);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** No NUL or other control characters but whitespace, and no lone surrogates. */
function clean(text: string): boolean {
  return !CONTROL.test(text) && !LONE_SURROGATE.test(text);
}

describe("parsers on stitched hostile documents", () => {
  it("htmlToText returns clean text", () => {
    fc.assert(
      fc.property(markup, (html) => {
        expect(clean(htmlToText(html))).toBe(true);
      }),
    );
  });

  it("parseDuckDuckGoHtml returns the page's results in order, with clean titles and snippets", () => {
    let runs = 0;
    let withResults = 0;
    fc.assert(
      fc.property(resultsPage, ({ html, count }) => {
        runs++;
        const page = parseDuckDuckGoHtml(html, "https://html.duckduckgo.com/html/");
        expect(page.recognized).toBe(true);
        expect(page.results.length).toBeLessThanOrEqual(count);
        // Each result is one of the page's, redirects unwrapped, titled by the link it came
        // with, in page order; hostile text never invents one.
        const numbers = page.results.map((result) => {
          const number = Number(/^https:\/\/r(\d+)\.example\/$/.exec(result.url)?.[1]);
          expect(number).toBeLessThan(count);
          expect(result.title.startsWith(`R${number}`)).toBe(true);
          expect(clean(result.title + result.snippet)).toBe(true);
          return number;
        });
        expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
        expect(new Set(numbers).size).toBe(numbers.length);
        if (page.results.length > 0) withResults++;
      }),
    );
    // The property says something only about pages that yield results: most of them must.
    expect(withResults).toBeGreaterThan(runs / 2);
  });

  it("parseFeed returns undefined or a feed with clean text, for RSS summaries and Atom xhtml", () => {
    fc.assert(
      fc.property(markup, (html) => {
        for (const xml of [
          `<rss><channel><title>T</title><item><title>x</title><description>${html}</description></item></channel></rss>`,
          `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><title type="xhtml"><div>${html}</div></title></entry></feed>`,
        ]) {
          const feed = parseFeed(xml);
          for (const item of feed?.items ?? []) {
            expect(clean(item.title + (item.summary ?? ""))).toBe(true);
          }
        }
      }),
    );
  });

  it("parseIcs throws only its format error, and expanding what it read never throws", () => {
    fc.assert(
      fc.property(icsLine, (text) => {
        let calendar: ReturnType<typeof parseIcs>;
        try {
          calendar = parseIcs(text);
        } catch (error) {
          expect(error).toBeInstanceOf(IcsFormatError);
          return;
        }
        const { occurrences } = occurrencesInWindow(calendar, {
          windowStart: Date.parse("2026-01-01T00:00:00Z"),
          windowEnd: Date.parse("2026-03-01T00:00:00Z"),
          limit: 25,
          budget: 5_000,
        });
        for (const o of occurrences) expect(Number.isFinite(o.startMs)).toBe(true);
      }),
    );
  });
});
