import { readdirSync, readFileSync } from "node:fs";
import { type AnyToolDefinition, ToolFailure } from "@toolbus/core/tool-definition";
import { failure as failureSchema } from "@toolbus/wire/model";
import { expect } from "vitest";

/**
 * The hostile corpus for tool parsers: the files under test/fixtures/hostile/<kind>/, plus
 * shapes too large to keep as files (deep nesting, long runs, the reports' quadratic
 * reproductions at a few hundred KB), generated here. Sizes stay small enough for a 2-core
 * test run; the bench shows the same parsers at up to their real caps.
 */
export interface HostileCase {
  name: string;
  body: Buffer;
}

const ROOT = new URL("../fixtures/hostile/", import.meta.url);

function files(kind: "html" | "xml" | "ics"): HostileCase[] {
  const folder = new URL(`${kind}/`, ROOT);
  return readdirSync(folder)
    .sort()
    .map((name) => ({ name: `${kind}/${name}`, body: readFileSync(new URL(name, folder)) }));
}

function generated(name: string, text: string): HostileCase {
  return { name: `generated: ${name}`, body: Buffer.from(text) };
}

/** A file's content repeated to about `bytes`: many unclosed quotes or scripts at once. */
function blownUp(from: HostileCase, bytes: number): HostileCase {
  const copies = Math.max(2, Math.ceil(bytes / Math.max(1, from.body.length)));
  return {
    name: `${from.name} x${copies}`,
    body: Buffer.concat(Array.from({ length: copies }, () => from.body)),
  };
}

const KB = 1024;

/** HTML pages and fragments: result pages, feed summaries, snippets. */
export function hostileHtml(): HostileCase[] {
  const base = files("html");
  return [
    ...base,
    ...base.map((c) => blownUp(c, 256 * KB)),
    generated("10,000 nested divs", `${"<div>".repeat(10_000)}deep${"</div>".repeat(10_000)}`),
    generated("10,000 unclosed divs", `${"<div><p><b>".repeat(10_000)}open`),
    generated("unclosed quotes, 120 KB", `<p a="${'<a href="x '.repeat(12 * KB)}`),
    generated("unclosed script, 300 KB", `<p>x</p><script>${"<p>a</p>".repeat(37 * KB)}`),
    generated("one word of 1 MB", "a".repeat(1024 * KB)),
    generated("100,000 ampersands", "&".repeat(100_000)),
    generated("100,000 less-than signs", "<".repeat(100_000)),
  ];
}

/** Documents a feed URL could answer with. */
export function hostileXml(): HostileCase[] {
  const rss = (inner: string) => `<rss><channel><title>T</title>${inner}</channel></rss>`;
  return [
    ...files("xml"),
    generated("10,000 nested elements", rss(`${"<x>".repeat(10_000)}${"</x>".repeat(10_000)}`)),
    generated("20,000 items", rss("<item><title>i</title></item>".repeat(20_000))),
    generated("a title of 1 MB", rss(`<item><title>${"t".repeat(1024 * KB)}</title></item>`)),
    generated(
      "a summary with an unclosed script, 313 KB",
      rss(
        `<item><title>x</title><description>&lt;p&gt;words&lt;script&gt;${"var a = 1; ".repeat(29 * KB)}</description></item>`,
      ),
    ),
    generated(
      "Atom xhtml nested past the parser's limit",
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><title type="xhtml">${"<b>".repeat(100)}x${"</b>".repeat(100)}</title></entry></feed>`,
    ),
    generated("100,000 bare ampersands", rss(`<item><title>${"& ".repeat(50_000)}</title></item>`)),
  ];
}

/** iCalendar feeds: each recurrence shape of the report, broken structure, huge values. */
export function hostileIcs(): HostileCase[] {
  const calendar = (...lines: string[]) =>
    ["BEGIN:VCALENDAR", "VERSION:2.0", ...lines, "END:VCALENDAR", ""].join("\r\n");
  const event = (...lines: string[]) => ["BEGIN:VEVENT", ...lines, "END:VEVENT"].join("\r\n");
  return [
    ...files("ics"),
    generated(
      "2,000 nested VEVENTs",
      calendar(`${"BEGIN:VEVENT\r\n".repeat(2000)}${"END:VEVENT\r\n".repeat(2000)}`.trim()),
    ),
    generated(
      "5,000 daily events since 1990",
      calendar(
        ...Array.from({ length: 5000 }, (_, i) =>
          event(`UID:e${i}`, "DTSTART:19900101T090000Z", "RRULE:FREQ=DAILY", "SUMMARY:daily"),
        ),
      ),
    ),
    generated(
      "a summary folded 10,000 times",
      calendar(event("UID:long", "DTSTART:20260115T090000Z", `SUMMARY:${"x\r\n ".repeat(10_000)}`)),
    ),
    generated(
      "a zone name of 100,000 letters",
      calendar(event("UID:zone", `DTSTART;TZID=${"a".repeat(100_000)}:20260115T090000`)),
    ),
    generated(
      "5,000 distinct zone names",
      calendar(
        ...Array.from({ length: 5000 }, (_, i) =>
          event(
            `UID:z${i}`,
            `DTSTART;TZID=Zone ${i}:20260115T090000`,
            `RDATE;TZID=Other ${i}:20260116T090000`,
          ),
        ),
      ),
    ),
    generated(
      "5,000 distinct rules it cannot expand",
      calendar(
        ...Array.from({ length: 5000 }, (_, i) =>
          event(`UID:r${i}`, "DTSTART:20260115T090000Z", `RRULE:FREQ=NEVER${i}`),
        ),
      ),
    ),
    generated(
      "a description of 200 KB of spaces",
      calendar(
        event("UID:spaces", "DTSTART:20260115T090000Z", `DESCRIPTION:x${" ".repeat(200 * KB)}x`),
      ),
    ),
    generated(
      "a description of 50,000 unclosed tags",
      calendar(event("UID:tags", "DTSTART:20260115T090000Z", `DESCRIPTION:${"<a".repeat(50_000)}`)),
    ),
  ];
}

/** Caller text: NUL, lone surrogates, long runs, and the HTML corpus read as prose. */
export function hostileText(): { name: string; text: string }[] {
  return [
    { name: "NUL characters", text: "Words\u0000 with\u0000\u0000 NUL. And more." },
    { name: "lone surrogates", text: "High \ud800 low \udc00 pair 😀 reversed \udc00\ud800." },
    { name: "100,000 dots", text: ".".repeat(100_000) },
    { name: "100,000 quotes after a stop", text: `End.${'"'.repeat(99_990)}x` },
    { name: "one word of 100,000 letters", text: "a".repeat(100_000) },
    { name: "100,000 hyphens between letters", text: "a-".repeat(50_000) },
    { name: "digits with separators", text: `1,${"000,".repeat(24_999)}5` },
    ...hostileHtml()
      .filter((c) => c.body.length <= 100_000)
      .map((c) => ({ name: c.name, text: c.body.toString("utf8") })),
  ];
}

/**
 * A clean outcome: a result whose data matches the tool's output schema and whose text is
 * well-formed, or a ToolFailure with a failure an agent can act on. Anything else (a plain
 * Error, a TypeError from a parser) fails the test. Returns what happened, for the caller.
 */
export async function expectCleanOutcome(
  tool: AnyToolDefinition,
  run: Promise<{ output: string; data: unknown }>,
): Promise<"result" | string> {
  let result: { output: string; data: unknown };
  try {
    result = await run;
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    expect(failureSchema.safeParse(error.failure).success).toBe(true);
    expect(error.failure.kind).not.toBe("internal");
    expect(error.failure.message).not.toMatch(/\n\s+at |node_modules|TypeError|RangeError/);
    return error.failure.kind;
  }
  expect(tool.output.safeParse(result.data).success).toBe(true);
  expect(result.output).toBeTypeOf("string");
  expect(isWellFormed(result.output), "output holds a lone surrogate").toBe(true);
  return "result";
}

/** Whether a string has no lone surrogates (String#isWellFormed is newer than ES2023's lib). */
function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
