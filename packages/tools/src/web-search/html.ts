/**
 * Just enough HTML reading for search result pages: a forgiving tokenizer (no tree, no
 * browser) and entity decoding. Pages from the wild are often not well formed, so nothing
 * here throws: what cannot be read as a tag is read as text.
 */

export type HtmlToken =
  | { type: "open"; name: string; attrs: ReadonlyMap<string, string>; selfClosing: boolean }
  | { type: "close"; name: string }
  /** Raw text as written in the page: entities are still encoded. */
  | { type: "text"; text: string };

/** Elements whose content is not markup; script and style content is dropped entirely. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title"]);
const DROPPED = new Set(["script", "style"]);

/** The tokens of an HTML document, in order. */
export function* tokenizeHtml(html: string): Generator<HtmlToken> {
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt === -1) {
      yield { type: "text", text: html.slice(i) };
      return;
    }
    if (lt > i) yield { type: "text", text: html.slice(i, lt) };
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    if (html[lt + 1] === "!" || html[lt + 1] === "?") {
      const end = html.indexOf(">", lt);
      i = end === -1 ? html.length : end + 1;
      continue;
    }
    const tag = readTag(html, lt);
    if (!tag) {
      yield { type: "text", text: "<" };
      i = lt + 1;
      continue;
    }
    yield tag.token;
    i = tag.end;
    if (tag.token.type === "open" && !tag.token.selfClosing && RAW_TEXT.has(tag.token.name)) {
      const name = tag.token.name;
      const close = indexOfIgnoreCase(html, `</${name}`, i);
      const contentEnd = close === -1 ? html.length : close;
      if (!DROPPED.has(name) && contentEnd > i) {
        yield { type: "text", text: html.slice(i, contentEnd) };
      }
      if (close === -1) return;
      const gt = html.indexOf(">", close);
      yield { type: "close", name };
      i = gt === -1 ? html.length : gt + 1;
    }
  }
}

function readTag(html: string, start: number): { token: HtmlToken; end: number } | undefined {
  let i = start + 1;
  const closing = html[i] === "/";
  if (closing) i++;
  const nameMatch = /^[A-Za-z][A-Za-z0-9:-]*/.exec(html.slice(i, i + 64));
  if (!nameMatch) return undefined;
  const name = nameMatch[0].toLowerCase();
  i += nameMatch[0].length;
  const attrs = new Map<string, string>();
  for (;;) {
    i = skipWhitespace(html, i);
    if (i >= html.length) return undefined;
    const c = html[i];
    if (c === ">") {
      i++;
      break;
    }
    if (c === "/" && html[i + 1] === ">") {
      const token: HtmlToken = closing
        ? { type: "close", name }
        : { type: "open", name, attrs, selfClosing: true };
      return { token, end: i + 2 };
    }
    if (c === "/") {
      i++;
      continue;
    }
    const attrStart = i;
    while (i < html.length && !/[\s=>]/.test(html[i] as string) && html[i] !== "/") i++;
    if (i === attrStart) i++; // a stray character such as a quote: step over it
    const attrName = html.slice(attrStart, i).toLowerCase();
    i = skipWhitespace(html, i);
    let value = "";
    if (html[i] === "=") {
      i = skipWhitespace(html, i + 1);
      const quote = html[i];
      if (quote === '"' || quote === "'") {
        const endQuote = html.indexOf(quote, i + 1);
        if (endQuote === -1) return undefined;
        value = html.slice(i + 1, endQuote);
        i = endQuote + 1;
      } else {
        const valueStart = i;
        while (i < html.length && !/[\s>]/.test(html[i] as string)) i++;
        value = html.slice(valueStart, i);
      }
    }
    if (!closing && attrName !== "" && !attrs.has(attrName)) {
      attrs.set(attrName, decodeEntities(value));
    }
  }
  const token: HtmlToken = closing
    ? { type: "close", name }
    : { type: "open", name, attrs, selfClosing: false };
  return { token, end: i };
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}

function indexOfIgnoreCase(text: string, needle: string, from: number): number {
  const lower = needle.toLowerCase();
  let at = text.indexOf("</", from);
  while (at !== -1) {
    if (text.slice(at, at + lower.length).toLowerCase() === lower) return at;
    at = text.indexOf("</", at + 2);
  }
  return -1;
}

/** The named entities result pages use; an unknown name is left as written. */
const NAMED_ENTITIES = new Map<string, string>([
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
  ["nbsp", "\u00a0"],
  ["hellip", "…"],
  ["mdash", "—"],
  ["ndash", "–"],
  ["lsquo", "‘"],
  ["rsquo", "’"],
  ["ldquo", "“"],
  ["rdquo", "”"],
  ["laquo", "«"],
  ["raquo", "»"],
  ["middot", "·"],
  ["bull", "•"],
  ["copy", "©"],
  ["reg", "®"],
  ["trade", "™"],
  ["deg", "°"],
  ["times", "×"],
  ["euro", "€"],
]);

/** Decodes character references: named ones from the table above, any numeric one. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));/g,
    (match, decimal: string | undefined, hex: string | undefined, named: string | undefined) => {
      if (named !== undefined) return NAMED_ENTITIES.get(named) ?? match;
      const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex as string, 16);
      const valid = code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff);
      return valid ? String.fromCodePoint(code) : "\ufffd";
    },
  );
}

/** Text with tags removed and entities decoded, on one line with single spaces. */
export function htmlToText(html: string): string {
  let text = "";
  for (const token of tokenizeHtml(html)) {
    if (token.type === "text") text += token.text;
    else if (token.name === "br" || token.name === "p" || token.name === "div") text += " ";
  }
  return collapseWhitespace(decodeEntities(text));
}

export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The class names in an element's class attribute. */
export function classesOf(attrs: ReadonlyMap<string, string>): string[] {
  return (attrs.get("class") ?? "").split(/\s+/).filter((c) => c !== "");
}
