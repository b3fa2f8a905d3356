import { performance } from "node:perf_hooks";
import { schemaIssues } from "../packages/core/src/registered/json-schema";
import { MAX_BODY_BYTES } from "../packages/http/src";
import { MAX_ENTRY_BYTES } from "../packages/local/src/bus";
import { createPatternIndex } from "../packages/pattern/src";
import { plainText } from "../packages/tools/src/calendar/events";
import { occurrencesInWindow, parseIcs } from "../packages/tools/src/calendar/ics";
import { ICS_MAX_BYTES } from "../packages/tools/src/calendar/ics-feed";
import { analyzeReadability } from "../packages/tools/src/readability/analyze";
import { parseFeed } from "../packages/tools/src/rss-feed/parse";
import { FEED_MAX_BYTES } from "../packages/tools/src/rss-feed/rss-feed";
import { htmlToText } from "../packages/tools/src/text/html";
import { parseDuckDuckGoHtml } from "../packages/tools/src/web-search/duckduckgo";
import { MAX_RESPONSE_BYTES } from "../packages/tools/src/web-search/provider";
import { type Measurement, measurement } from "./stats";

/**
 * Each parser and checker a caller's input reaches, on the input shapes that used to go
 * quadratic, at n and 2n bytes with 2n at the real cap (the tool's, the API body's, the bus
 * entry's). The ratio is time(2n) / time(n): about 2 means linear, about 4 quadratic. The tests
 * count the same shapes' work where it can be counted; a regex's steps cannot, so it is timed
 * here.
 */

interface Shape {
  name: string;
  /** The largest input the tool accepts: 2n. */
  cap: number;
  /** An input of about `bytes` bytes. */
  make(bytes: number): string;
  parse(input: string): unknown;
}

/** `unit` repeated to about `bytes`, between `before` and `after`. */
function fill(bytes: number, unit: string, before = "", after = ""): string {
  const room = Math.max(0, bytes - before.length - after.length);
  return `${before}${unit.repeat(Math.max(1, Math.floor(room / unit.length)))}${after}`;
}

const rss = (inner: string) => `<rss><channel><title>T</title>${inner}</channel></rss>`;
const ics = (body: string) => `BEGIN:VCALENDAR\r\nVERSION:2.0\r\n${body}END:VCALENDAR\r\n`;
const WINDOW = {
  windowStart: Date.parse("2026-01-01T00:00:00Z"),
  windowEnd: Date.parse("2026-02-01T00:00:00Z"),
  limit: 101,
};

/** Nine levels of entities, each ten of the one below: &lol9; is three billion characters. */
const LAUGHS = `<?xml version="1.0"?>
<!DOCTYPE rss [
  <!ENTITY lol "lol">
${Array.from({ length: 9 }, (_, i) => `  <!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`).join("\n")}
]>
<rss version="2.0"><channel><title>Laughs &lol9;</title>`;

/** A registered tool's input schema: two formats and a pattern on caller strings. */
const CHECKED = {
  type: "object",
  properties: {
    email: { type: "string", format: "email" },
    uri: { type: "string", format: "uri" },
    word: { type: "string", pattern: "^[a-z]+$" },
  },
};

/** Built on first use, so a run of other groups never pays for it. */
function lazy<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

/** 2,000 patterns anchored on "any value at v" or on ranges at n, and one on w. */
const repeatedValueIndex = lazy(() => {
  const index = createPatternIndex<number>();
  for (let i = 0; i < 2_000; i++) {
    const anchor = i % 2 ? { n: [{ numeric: [">", -i] }] } : { v: [{ exists: true }] };
    index.add(i, { ...anchor, w: [{ exists: false }] });
  }
  index.add(-1, { w: [1] });
  return index;
});

/**
 * The bus hands the matcher events it has parsed already, and JSON.parse of a large array mostly
 * times the allocator: each event text is parsed once (in the warm-up run), its object reused.
 */
const parsedEvents = new Map<string, unknown>();
function parsedEvent(text: string): unknown {
  let event = parsedEvents.get(text);
  if (event === undefined) {
    event = JSON.parse(text);
    parsedEvents.set(text, event);
  }
  return event;
}

/** 1,000 prefixes sharing their first thousand characters. */
const longPrefixIndex = lazy(() => {
  const index = createPatternIndex<number>();
  for (let i = 0; i < 1_000; i++) index.add(i, { s: [{ prefix: `${"p".repeat(1_000)}${i}` }] });
  return index;
});

const SHAPES: Shape[] = [
  {
    name: "rss_feed: an item summary with an unclosed <script>",
    cap: FEED_MAX_BYTES,
    make: (bytes) =>
      fill(
        bytes,
        "var a = '&lt;p&gt;'; ",
        rss("<item><title>x</title><description>&lt;p&gt;words&lt;script&gt;"),
        "</description></item></channel></rss>",
      ),
    parse: (xml) => parseFeed(xml),
  },
  {
    name: "rss_feed: items with HTML summaries",
    cap: FEED_MAX_BYTES,
    make: (bytes) =>
      fill(
        bytes,
        "<item><title>Post</title><description>&lt;p&gt;A &lt;b&gt;short&lt;/b&gt; summary &amp;eacute;&lt;/p&gt;</description></item>",
        "<rss><channel><title>T</title>",
        "</channel></rss>",
      ),
    parse: (xml) => parseFeed(xml),
  },
  {
    name: "rss_feed: Atom entries with xhtml titles",
    cap: FEED_MAX_BYTES,
    make: (bytes) =>
      fill(
        bytes,
        '<entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Hello <b>brave</b> new <i>world</i></div></title></entry>',
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>',
        "</feed>",
      ),
    parse: (xml) => parseFeed(xml),
  },
  {
    name: "rss_feed: items full of billion-laughs references",
    cap: FEED_MAX_BYTES,
    make: (bytes) =>
      fill(
        bytes,
        "<item><title>&lol9;&lol9;&lol9;</title><description>&lol9; &amp; goodbye</description></item>",
        LAUGHS,
        "</channel></rss>",
      ),
    parse: (xml) => parseFeed(xml),
  },
  {
    name: "HTML to text: unclosed quotes",
    cap: FEED_MAX_BYTES,
    make: (bytes) => fill(bytes, '<a href="x ', "<p>"),
    parse: htmlToText,
  },
  {
    name: "web_search: a DuckDuckGo page with unclosed quotes",
    cap: MAX_RESPONSE_BYTES,
    make: (bytes) =>
      fill(bytes, '<a class="result__a" href="x ', '<div id="links"><div class="result">'),
    parse: (html) => parseDuckDuckGoHtml(html, "https://html.duckduckgo.com/html/"),
  },
  {
    name: "web_search: a DuckDuckGo page of results",
    cap: MAX_RESPONSE_BYTES,
    make: (bytes) =>
      fill(
        bytes,
        '<div class="result"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2F">Title &eacute;</a><a class="result__snippet">A <b>snippet</b></a></div>',
        '<div id="links">',
      ),
    parse: (html) => parseDuckDuckGoHtml(html, "https://html.duckduckgo.com/html/"),
  },
  {
    name: "calendar: an ICS feed of Outlook-zoned events with RDATEs",
    cap: ICS_MAX_BYTES,
    make: (bytes) =>
      ics(
        fill(
          bytes,
          "BEGIN:VEVENT\r\nDTSTART;TZID=W. Europe Standard Time:20260113T180000\r\nRDATE:20260120T170000Z\r\nSUMMARY:Sync\r\nEND:VEVENT\r\n",
        ),
      ),
    parse: (text) => occurrencesInWindow(parseIcs(text), WINDOW),
  },
  {
    name: "calendar: a description of spaces and unclosed tags",
    cap: ICS_MAX_BYTES,
    make: (bytes) => fill(bytes, "<a   \t  "),
    parse: (text) => plainText(text),
  },
  {
    name: "registered JSON Schema: one long string against email, uri and a pattern",
    cap: MAX_BODY_BYTES,
    make: (bytes) => {
      const value = `${"a".repeat(Math.floor(bytes / 3) - 20)}@`;
      return JSON.stringify({ email: value, uri: value, word: value });
    },
    parse: (body) => schemaIssues(CHECKED, JSON.parse(body)),
  },
  {
    name: "event pattern index: arrays repeating one value, 2,001 patterns",
    cap: MAX_ENTRY_BYTES,
    make: (bytes) => {
      // '"same",' and '1,': nine bytes per pair of elements.
      const count = Math.floor(bytes / 9);
      return JSON.stringify({ v: Array(count).fill("same"), n: Array(count).fill(1), w: 1 });
    },
    parse: (event) => repeatedValueIndex().match(parsedEvent(event)),
  },
  {
    name: "event pattern index: a long string against 1,000 long prefixes",
    cap: MAX_ENTRY_BYTES,
    make: (bytes) => JSON.stringify({ s: fill(bytes - 10, "q", `${"p".repeat(1_000)}7`) }),
    parse: (event) => longPrefixIndex().match(parsedEvent(event)),
  },
  {
    name: "readability_analyzer: prose",
    cap: 100_000,
    make: (bytes) =>
      fill(bytes, "The quick brown fox, e.g. Mr. Smith's dog, jumped 3.14 m. Did it? Yes! "),
    parse: analyzeReadability,
  },
];

/**
 * The fastest of five runs of each size after a warm-up, in ms, n and 2n taking turns: on a
 * shared machine other work only ever adds time, and alternating spreads it over both sizes.
 */
function times(parse: (input: string) => unknown, small: string, large: string): [number, number] {
  parse(small);
  parse(large);
  let n = Number.POSITIVE_INFINITY;
  let twoN = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    let started = performance.now();
    parse(small);
    n = Math.min(n, performance.now() - started);
    started = performance.now();
    parse(large);
    twoN = Math.min(twoN, performance.now() - started);
  }
  return [n, twoN];
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / (1024 * 1024)).toFixed(1)} MB`
    : `${Math.round(bytes / 1024)} KB`;
}

export function benchParsers(): Measurement[] {
  return SHAPES.map((shape) => {
    const small = shape.make(shape.cap / 2);
    const large = shape.make(shape.cap);
    const [n, twoN] = times(shape.parse, small, large);
    return measurement(
      `${shape.name}, ${size(large.length)} (2n)`,
      "ms",
      twoN,
      { name: `the same at ${size(small.length)} (n); about 2x is linear`, value: n },
      "lower",
    );
  });
}
