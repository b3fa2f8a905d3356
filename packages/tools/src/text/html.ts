import { type Handler, Parser } from "htmlparser2";

/**
 * HTML read the way a browser's tokenizer reads it (htmlparser2), so no input shape can make
 * it scan the same text twice: unclosed tags, quotes and `<script>` cost one pass like the
 * rest. Shared by rss_feed and web_search; only those two tools import it.
 */

/** Elements whose content is never reader-visible text. */
const HIDDEN = new Set(["script", "style", "template", "noscript", "head"]);

/** Block-level elements: each one breaks words apart so "a</p><p>b" does not become "ab". */
const BLOCK = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "figcaption",
  "figure",
  "footer",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "td",
  "th",
  "tr",
  "ul",
]);

/** Whether an element separates words: a line break or a block. */
export function breaksWords(name: string): boolean {
  return BLOCK.has(name);
}

/** The callbacks `readHtml` passes on; names are lower-case, text is decoded. */
export type HtmlHandler = Pick<Partial<Handler>, "onopentag" | "onclosetag" | "ontext">;

/** Streams an HTML document or fragment through `handler`: entities decoded, in one pass. */
export function readHtml(html: string, handler: HtmlHandler): void {
  const parser = new Parser(handler, { decodeEntities: true, recognizeCDATA: true });
  parser.end(html);
}

/** Plain text from an HTML fragment: tags dropped, references decoded, whitespace collapsed. */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let hidden = 0;
  readHtml(html, {
    onopentag(name) {
      if (HIDDEN.has(name)) hidden++;
      else if (BLOCK.has(name)) parts.push(" ");
    },
    onclosetag(name) {
      if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
      else if (BLOCK.has(name)) parts.push(" ");
    },
    ontext(text) {
      if (hidden === 0) parts.push(text);
    },
  });
  return collapseWhitespace(parts.join(""));
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it drops.
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * One line with single spaces. Control characters (NUL and the like) are dropped and lone
 * surrogates become U+FFFD: neither means anything to a reader, and both trouble JSON
 * consumers downstream.
 */
export function collapseWhitespace(text: string): string {
  return text.replace(CONTROL, "").replace(LONE_SURROGATE, "\ufffd").replace(/\s+/g, " ").trim();
}
