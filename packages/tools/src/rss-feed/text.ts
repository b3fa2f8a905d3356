/** The HTML named references feed summaries actually use; the rest stay as written. */
const HTML_ENTITIES = new Map<string, string>(
  Object.entries({
    amp: "&",
    lt: "<",
    gt: ">",
    quot: '"',
    apos: "'",
    nbsp: " ",
    hellip: "…",
    mdash: "—",
    ndash: "–",
    lsquo: "‘",
    rsquo: "’",
    ldquo: "“",
    rdquo: "”",
    laquo: "«",
    raquo: "»",
    bull: "•",
    middot: "·",
    copy: "©",
    reg: "®",
    trade: "™",
    deg: "°",
    euro: "€",
    pound: "£",
  }),
);

/** Elements whose content is never reader-visible text. */
const HIDDEN = /<(script|style|template|noscript|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;

/** Block-level tags: each one breaks words apart so "a</p><p>b" does not become "ab". */
const BLOCK =
  /<\/?(?:p|div|br|hr|li|ul|ol|h[1-6]|blockquote|pre|tr|td|th|table|section|article|figure|figcaption|header|footer)\b[^>]*>/gi;

/** Plain text from an HTML fragment: tags dropped, references decoded, whitespace collapsed. */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, "$1")
    .replace(HIDDEN, " ")
    .replace(BLOCK, " ")
    .replace(/<\/?[a-z][^>]*>/gi, "");
  return collapseWhitespace(decodeHtmlReferences(text));
}

export function collapseWhitespace(text: string): string {
  return text.replace(/[\s\u00a0]+/g, " ").trim();
}

/** Decodes character references in text that was HTML source. Single pass: no re-expansion. */
export function decodeHtmlReferences(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});/gi, (ref, body) => {
    if (body[0] === "#") return codePoint(body) ?? ref;
    return HTML_ENTITIES.get(body.toLowerCase()) ?? ref;
  });
}

/** `#65` or `#x41` as a character; undefined for values that are not Unicode scalar values. */
export function codePoint(reference: string): string | undefined {
  const hex = reference[1] === "x" || reference[1] === "X";
  const value = Number.parseInt(reference.slice(hex ? 2 : 1), hex ? 16 : 10);
  if (!Number.isInteger(value) || value <= 0 || value > 0x10ffff) return undefined;
  if (value >= 0xd800 && value <= 0xdfff) return undefined;
  return String.fromCodePoint(value);
}

/** Cuts at a word boundary near `max` characters and marks the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  if (/\s/.test(text.charAt(max - 1))) return `${cut.trimEnd()}…`;
  const space = cut.lastIndexOf(" ");
  const base = space > max * 0.6 ? cut.slice(0, space) : cut;
  return `${base.replace(/[\s,.;:–—-]+$/, "")}…`;
}
