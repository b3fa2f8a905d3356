import { decodeHTMLStrict } from "entities/decode";
import { type EntityDecoderOptions, XMLParser, XMLValidator } from "fast-xml-parser";
import { breaksWords, collapseWhitespace, htmlToText } from "../text/html";
import { parseFeedDate } from "./dates";
import type { FeedFormat } from "./formats";
import { truncate } from "./text";

export interface FeedItem {
  title: string;
  link?: string;
  /** ISO 8601 in UTC. */
  published?: string;
  /** Plain text: HTML stripped, whitespace collapsed, at most SUMMARY_MAX_CHARS. */
  summary?: string;
  id?: string;
}

export interface ParsedFeed {
  title: string;
  link?: string;
  format: FeedFormat;
  /** In document order; see `newestFirst`. */
  items: FeedItem[];
}

export const SUMMARY_MAX_CHARS = 500;
const TITLE_MAX_CHARS = 300;

const NS = {
  atom: "http://www.w3.org/2005/Atom",
  rss1: "http://purl.org/rss/1.0/",
  rss090: "http://my.netscape.com/rdf/simple/0.9/",
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  dc: "http://purl.org/dc/elements/1.1/",
  content: "http://purl.org/rss/1.0/modules/content/",
};

/**
 * Characters the reference decoder has read and written since the module loaded. Decoding
 * only ever shortens text, and each character of a document is read once, so both stay within
 * the document's size whatever its DOCTYPE declares: tests check that with these counts.
 */
export const referenceWork = { read: 0, written: 0 };

/**
 * Decodes character references in one pass: the XML ones, numeric ones, and the HTML names
 * feeds write without declaring them (`&eacute;`, `&hellip;`), which no XML reader knows.
 * Entities a DOCTYPE declares are dropped on purpose (`addInputEntities` ignores them), so
 * "billion laughs" and external entities stay inert text instead of expanding.
 */
const referencesOnly: EntityDecoderOptions = {
  setExternalEntities() {},
  addInputEntities() {},
  reset() {},
  setXmlVersion() {},
  decode(text) {
    const decoded = decodeHTMLStrict(text);
    referenceWork.read += text.length;
    referenceWork.written += decoded.length;
    return decoded;
  },
};

/**
 * Order-preserving, so Atom's inline xhtml reads "Hello brave new world" rather than its
 * text nodes grouped by element name. Values are not trimmed here: the spaces between inline
 * elements are words' separators; `objectForm` trims where the order no longer matters.
 */
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  textNodeName: "#text",
  // Titles such as "2024" or "1e3" must stay text.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  htmlEntities: false,
  entityDecoder: referencesOnly,
  // Bounds the DOCTYPE reader even though its entities are never used.
  processEntities: { enabled: true, maxEntityCount: 64, maxEntitySize: 1024 },
  maxNestedTags: 64,
});

type XmlNode = Record<string, unknown>;

/** An element's children in document order, as the order-preserving parser gives them. */
type OrderedChildren = readonly Record<string, unknown>[];

/** Each object-form element's ordered children, for the text constructs that need them. */
const orderedChildren = new WeakMap<XmlNode, OrderedChildren>();

/**
 * The order-preserving tree as name-keyed objects (repeated names become arrays, attributes
 * `@_name`, text `#text`), which is how the readers below look things up. Elements with
 * neither attributes nor children become their trimmed text. Depth is bounded by the
 * parser's `maxNestedTags`.
 */
function objectForm(children: OrderedChildren, attributes?: unknown): unknown {
  const node: XmlNode = {};
  const texts: string[] = [];
  const repeated = new Set<string>();
  let elements = 0;
  for (const child of children) {
    if ("#text" in child) {
      const value = String(child["#text"]).trim();
      if (value !== "") texts.push(value);
      continue;
    }
    const name = Object.keys(child).find((key) => key !== ":@");
    const value = name === undefined ? undefined : child[name];
    if (name === undefined || !Array.isArray(value)) continue;
    const converted = objectForm(value, child[":@"]);
    // Arrays are only made for names that repeat, and grown in place: a feed may have
    // thousands of items.
    const existing = node[name];
    if (existing === undefined) node[name] = converted;
    else if (repeated.has(name)) (existing as unknown[]).push(converted);
    else {
      node[name] = [existing, converted];
      repeated.add(name);
    }
    elements++;
  }
  if (elements === 0 && !isNode(attributes)) return texts.join(" ");
  // Attribute values are trimmed as the parser's trimValues did: type=" xhtml " is xhtml.
  if (isNode(attributes)) {
    for (const [key, value] of Object.entries(attributes)) {
      node[key] = typeof value === "string" ? value.trim() : value;
    }
  }
  if (texts.length > 0) node["#text"] = texts.join(" ");
  orderedChildren.set(node, children);
  return node;
}

/**
 * Reads an RSS 2.0 (and 0.9x), Atom 1.0 or RSS 1.0 (RDF) document. Returns undefined for
 * anything that is not XML or not one of those feeds. Relative links resolve against `baseUrl`.
 */
export function parseFeed(xml: string, baseUrl?: string): ParsedFeed | undefined {
  const source = wellFormed(xml);
  if (source === undefined) return undefined;
  let document: unknown;
  try {
    document = objectForm(parser.parse(source) as OrderedChildren);
  } catch {
    return undefined;
  }
  if (!isNode(document)) return undefined;
  const rootKey = Object.keys(document).find((key) => isNode(document[key]));
  if (rootKey === undefined) return undefined;
  const root = document[rootKey] as XmlNode;
  const namespaces = declaredNamespaces(root);
  const local = localName(rootKey);
  if (local === "rss") return readRss2(root, namespaces, baseUrl);
  if (local === "feed") return readAtom(root, prefixOf(rootKey), namespaces, baseUrl);
  if (local === "RDF") return readRss1(root, namespaces, baseUrl);
  return undefined;
}

/** An ampersand that starts no reference: the one malformation feeds commonly have. */
const BARE_AMPERSAND = /&(?!(?:[A-Za-z_][\w.-]{0,31}|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)/g;

/**
 * The parser alone is lenient enough to turn a truncated download into a plausible feed, so
 * the document must be well-formed first. Bare ampersands are escaped rather than refused.
 */
function wellFormed(xml: string): string | undefined {
  try {
    if (XMLValidator.validate(xml) === true) return xml;
    const repaired = xml.replace(BARE_AMPERSAND, "&amp;");
    if (repaired !== xml && XMLValidator.validate(repaired) === true) return repaired;
  } catch {}
  return undefined;
}

/** Newest first; undated items after dated ones, each group in document order. */
export function newestFirst(items: readonly FeedItem[]): FeedItem[] {
  return [...items].sort((a, b) => {
    if (a.published === undefined || b.published === undefined) {
      return (a.published === undefined ? 1 : 0) - (b.published === undefined ? 1 : 0);
    }
    return Date.parse(b.published) - Date.parse(a.published);
  });
}

function readRss2(root: XmlNode, ns: Namespaces, baseUrl?: string): ParsedFeed | undefined {
  const channel = first(root.channel);
  if (!isNode(channel)) return undefined;
  const dcDate = ns.names(NS.dc, "date", "dc");
  const encoded = ns.names(NS.content, "encoded", "content");
  const feedLink = resolveLink(text(first(channel.link)), baseUrl);
  const base = baseUrl ?? feedLink;
  const items = list(channel.item)
    .filter(isNode)
    .map((item) => {
      const guid = first(item.guid);
      const guidText = text(guid);
      const permalink = !(isNode(guid) && String(guid["@_isPermaLink"]).toLowerCase() === "false");
      const link =
        resolveLink(text(first(item.link)), base) ??
        // Only an absolute guid: many feeds leave isPermaLink out on ids like "12345".
        (permalink ? resolveLink(guidText) : undefined);
      return makeItem({
        title: plain(text(first(item.title))),
        link,
        published: parseFeedDate(text(first(item.pubDate))) ?? parseFeedDate(pick(item, dcDate)),
        summary: html(text(first(item.description)) ?? pick(item, encoded)),
        id: guidText,
      });
    });
  return {
    title: feedTitle(plain(text(first(channel.title))), baseUrl),
    ...optional("link", feedLink),
    format: "rss2",
    items,
  };
}

function readAtom(
  root: XmlNode,
  prefix: string,
  ns: Namespaces,
  baseUrl?: string,
): ParsedFeed | undefined {
  const el = (name: string) => (prefix === "" ? name : `${prefix}:${name}`);
  const declared = prefix === "" ? ns.defaultUri : ns.prefixes.get(prefix);
  // Atom 0.3 and undeclared documents still read fine; another namespace's <feed> does not.
  if (declared !== undefined && declared !== NS.atom && !declared.includes("atom")) {
    return undefined;
  }
  const feedLink = atomLink(root[el("link")], baseUrl);
  const base = baseUrl ?? feedLink;
  const items = list(root[el("entry")])
    .filter(isNode)
    .map((entry) =>
      makeItem({
        title: atomText(first(entry[el("title")])),
        link: atomLink(entry[el("link")], base),
        published: firstDate(
          ["published", "updated", "issued", "modified"].map((name) =>
            text(first(entry[el(name)])),
          ),
        ),
        summary: atomText(first(entry[el("summary")])) ?? atomText(first(entry[el("content")])),
        id: text(first(entry[el("id")])),
      }),
    );
  return {
    title: feedTitle(atomText(first(root[el("title")])), baseUrl),
    ...optional("link", feedLink),
    format: "atom",
    items,
  };
}

function readRss1(root: XmlNode, ns: Namespaces, baseUrl?: string): ParsedFeed | undefined {
  const rss = (name: string) => [...ns.names(NS.rss1, name), ...ns.names(NS.rss090, name)];
  const channel = first(pickNode(root, rss("channel")));
  if (!isNode(channel)) return undefined;
  const dcDate = ns.names(NS.dc, "date", "dc");
  const encoded = ns.names(NS.content, "encoded", "content");
  const about = ns.names(NS.rdf, "about", "rdf").map((name) => `@_${name}`);
  const feedLink = resolveLink(pick(channel, rss("link")), baseUrl);
  const base = baseUrl ?? feedLink;
  // In RSS 1.0 items are siblings of the channel, not its children.
  const items = list(pickNode(root, rss("item")))
    .filter(isNode)
    .map((item) =>
      makeItem({
        title: plain(pick(item, rss("title"))),
        link: resolveLink(pick(item, rss("link")), base),
        published: parseFeedDate(pick(item, dcDate)),
        summary: html(pick(item, rss("description")) ?? pick(item, encoded)),
        id: about.map((name) => item[name]).find((v): v is string => typeof v === "string"),
      }),
    );
  return {
    title: feedTitle(plain(pick(channel, rss("title"))), baseUrl),
    ...optional("link", feedLink),
    format: "rss1",
    items,
  };
}

function makeItem(fields: {
  title: string | undefined;
  link: string | undefined;
  published: string | undefined;
  summary: string | undefined;
  id: string | undefined;
}): FeedItem {
  const summary = fields.summary ? truncate(fields.summary, SUMMARY_MAX_CHARS) : undefined;
  // RSS allows items with only a description; its opening words are the best title there is.
  const title = fields.title || (summary ? truncate(summary, 80) : "Untitled");
  return {
    title: truncate(title, TITLE_MAX_CHARS),
    ...optional("link", fields.link),
    ...optional("published", fields.published),
    ...optional("summary", summary),
    ...optional("id", fields.id ? truncate(collapseWhitespace(fields.id), 500) : undefined),
  };
}

/** Atom text constructs: type "html" is escaped markup, "xhtml" inline markup, else text. */
function atomText(node: unknown): string | undefined {
  const type = isNode(node) ? String(node["@_type"] ?? "text").toLowerCase() : "text";
  if (type === "xhtml" && isNode(node)) {
    const result = collapseWhitespace(orderedText(orderedChildren.get(node) ?? []));
    return result === "" ? undefined : result;
  }
  const value = text(node);
  if (value === undefined) return undefined;
  return type === "html" || type === "text/html" ? html(value) : plain(value);
}

/**
 * The text of inline xhtml in document order. Its references were decoded by the XML
 * reader already; inline elements join words, blocks separate them.
 */
function orderedText(children: OrderedChildren): string {
  let result = "";
  for (const child of children) {
    if ("#text" in child) {
      result += String(child["#text"]);
      continue;
    }
    const name = Object.keys(child).find((key) => key !== ":@");
    const value = name === undefined ? undefined : child[name];
    if (name === undefined || !Array.isArray(value)) continue;
    const block = breaksWords(localName(name).toLowerCase());
    const inner = orderedText(value);
    result += block ? ` ${inner} ` : inner;
  }
  return result;
}

/** The entry's page: rel="alternate" (the default) preferring HTML, else any link. */
function atomLink(links: unknown, base?: string): string | undefined {
  const candidates = list(links)
    .filter(isNode)
    .map((link) => ({
      href: typeof link["@_href"] === "string" ? link["@_href"] : undefined,
      rel: String(link["@_rel"] ?? "alternate").toLowerCase(),
      type: String(link["@_type"] ?? "text/html").toLowerCase(),
    }))
    .filter((link) => link.href !== undefined);
  const alternate = candidates.filter((link) => link.rel === "alternate");
  const chosen =
    alternate.find((link) => link.type.includes("html")) ?? alternate[0] ?? candidates[0];
  return resolveLink(chosen?.href, base);
}

function firstDate(values: readonly (string | undefined)[]): string | undefined {
  for (const value of values) {
    const date = parseFeedDate(value);
    if (date !== undefined) return date;
  }
  return undefined;
}

function feedTitle(title: string | undefined, baseUrl?: string): string {
  if (title) return truncate(title, TITLE_MAX_CHARS);
  if (baseUrl) {
    try {
      return new URL(baseUrl).host;
    } catch {}
  }
  return "Untitled feed";
}

function plain(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const result = collapseWhitespace(value);
  return result === "" ? undefined : result;
}

function html(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const result = htmlToText(value);
  return result === "" ? undefined : result;
}

/** Only http(s) links, absolute: a feed may carry javascript: or relative hrefs. */
function resolveLink(href: string | undefined, base?: string): string | undefined {
  const value = href?.trim();
  if (!value) return undefined;
  try {
    const url = new URL(value, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** The text content of an element, whether it parsed as a string or a node with attributes. */
function text(node: unknown, depth = 0): string | undefined {
  if (typeof node === "string") return node;
  if (typeof node === "number" || typeof node === "boolean") return String(node);
  if (depth > 16) return undefined;
  if (Array.isArray(node)) {
    const parts = node.map((n) => text(n, depth + 1)).filter((p) => p !== undefined);
    return parts.length > 0 ? parts.join(" ") : undefined;
  }
  if (!isNode(node)) return undefined;
  // Inline xhtml is read in order by `orderedText`; other mixed content only needs its words.
  const parts = Object.entries(node)
    .filter(([key]) => !key.startsWith("@_"))
    .map(([, value]) => text(value, depth + 1))
    .filter((p) => p !== undefined);
  return parts.length > 0 ? parts.join(" ") : undefined;
}

function pick(node: XmlNode, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = text(first(node[name]));
    if (value !== undefined) return value;
  }
  return undefined;
}

function pickNode(node: XmlNode, names: readonly string[]): unknown {
  for (const name of names) {
    if (node[name] !== undefined) return node[name];
  }
  return undefined;
}

interface Namespaces {
  defaultUri: string | undefined;
  prefixes: Map<string, string>;
  /** Element names `uri`'s `local` may carry here: its declared prefixes, then the usual one. */
  names(uri: string, local: string, usual?: string): string[];
}

function declaredNamespaces(root: XmlNode): Namespaces {
  const prefixes = new Map<string, string>();
  let defaultUri: string | undefined;
  for (const [key, value] of Object.entries(root)) {
    if (typeof value !== "string") continue;
    if (key === "@_xmlns") defaultUri = value;
    else if (key.startsWith("@_xmlns:")) prefixes.set(key.slice("@_xmlns:".length), value);
  }
  return {
    defaultUri,
    prefixes,
    names(uri, local, usual) {
      const names: string[] = [];
      if (defaultUri === uri || (usual === undefined && defaultUri === undefined)) {
        names.push(local);
      }
      for (const [prefix, bound] of prefixes) if (bound === uri) names.push(`${prefix}:${local}`);
      if (usual !== undefined) names.push(`${usual}:${local}`);
      return [...new Set(names)];
    },
  };
}

function localName(key: string): string {
  return key.slice(key.indexOf(":") + 1);
}

function prefixOf(key: string): string {
  const colon = key.indexOf(":");
  return colon === -1 ? "" : key.slice(0, colon);
}

function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function list(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function isNode(value: unknown): value is XmlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
