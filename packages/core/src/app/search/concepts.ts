import { EVERYDAY_CONCEPTS } from "./concepts-everyday";
import { GENERAL_CONCEPTS } from "./concepts-general";
import { JARGON_CONCEPTS } from "./concepts-jargon";
import { term } from "./terms";
import { words } from "./words";

/**
 * Words agents and tools use for the same thing, as data: an agent asks for a "folder" where
 * a tool says "directory", "remember" where it says "knowledge graph". A query word of one
 * group also searches the group's other words, for less than the word itself (ToolIndex).
 *
 * Written from the vocabulary of tools in general (what file, image, issue, message, place,
 * memory, browser, database, git, cluster, calendar, task and search tools call things) and
 * of the tune queries of the real catalog's search set (bench/search-real.ts); never from
 * held-out queries. GENERAL_GROUPS (concepts-general.ts, product and technical words;
 * concepts-everyday.ts, the informal words people use for things and actions; and
 * concepts-jargon.ts, the working words of kinds of tools against their APIs'), written for
 * tools at large without reading any catalog or query of the set, are searched the same way.
 * A word may be in several groups; a phrase ("knowledge graph") is searched
 * as its words and triggers its group when the query holds all of them. Groups are one hop:
 * "photo" reaches "image", not what "image" reaches in another group.
 */
export const CONCEPTS: readonly (readonly string[])[] = [
  // Files and folders.
  ["folder", "directory", "dir"],
  ["file", "document"],
  ["rename", "move"],
  ["upload", "attach", "attachment"],
  ["disk", "storage", "size", "space", "bytes", "big", "stats", "statistics", "usage"],
  ["zip", "gzip", "compress", "archive"],
  // Images.
  ["picture", "image", "photo", "photograph", "illustration", "drawing", "artwork", "logo"],
  ["screenshot", "capture", "screen grab"],
  ["draw", "illustrate", "paint", "sketch", "generate image"],
  // Issues, tickets, code hosting.
  ["bug", "issue", "ticket", "defect", "bug report"],
  ["pull request", "pr", "merge request", "mr"],
  ["repository", "repo", "codebase"],
  ["reply", "comment", "respond", "discussion"],
  ["review", "approve", "reviewer", "lgtm", "looks good"],
  ["handle", "username", "user", "login"],
  ["fork", "copy"],
  // Git.
  ["git", "version control", "source control", "vcs"],
  ["commit", "save"],
  ["stage", "add"],
  ["sync", "pull", "synchronize"],
  ["recover", "restore", "lost", "dig up", "reflog"],
  ["clone", "download"],
  ["merge", "combine", "integrate", "squash", "land"],
  ["undo", "revert", "reset", "roll back", "rollback"],
  ["stash", "park", "shelve", "set aside"],
  ["tag", "mark", "version", "release"],
  ["history", "log", "changelog", "release notes"],
  ["diff", "changes", "changed", "difference", "compare"],
  ["status", "state", "modified", "uncommitted"],
  ["init", "initialize", "start"],
  ["branch", "up to date", "behind"],
  // Messages and chat.
  ["message", "chat", "dm", "direct message"],
  ["channel", "room"],
  ["reaction", "emoji", "react"],
  ["email", "mail", "inbox"],
  ["thread", "discussion", "conversation", "replies"],
  // Places and maps.
  ["coordinates", "latitude", "longitude", "location", "place", "geocode"],
  ["elevation", "altitude", "height", "sea level"],
  ["distance", "far", "travel time", "driving distance"],
  ["directions", "route", "walk", "walking", "commute"],
  ["nearby", "near", "around", "local"],
  // Memory.
  [
    "remember",
    "memory",
    "memorize",
    "knowledge graph",
    "entity",
    "observation",
    "relation",
    "recall",
    "forget",
    "keep in mind",
    "stored",
  ],
  ["fact", "observation", "note"],
  ["remember", "memorize", "keep in mind", "store", "save", "add", "create"],
  ["dump", "export", "entire", "whole"],
  ["person", "people", "entity"],
  // Spreadsheets and databases.
  ["spreadsheet", "sheet", "table", "base", "airtable", "grid"],
  ["row", "record", "entry", "item"],
  ["column", "field", "property", "attribute"],
  ["schema", "structure", "describe", "definition", "columns", "fields"],
  ["mention", "contain", "containing", "include"],
  ["tab", "sheet", "table"],
  ["database", "db", "sql", "query", "table"],
  ["collection", "table"],
  ["document", "doc", "record"],
  ["mongo", "mongodb"],
  ["postgres", "postgresql", "sql"],
  ["count", "many", "number", "tally"],
  ["sum", "add", "total", "addition", "plus", "aggregate"],
  ["group", "aggregate", "total"],
  ["filter", "query"],
  ["tracker", "database", "data source", "board"],
  // Browsers and the web.
  ["browser", "page", "tab", "navigate", "url", "website", "site", "web page"],
  ["url", "link", "href"],
  ["open", "visit", "load", "navigate"],
  ["popup", "pop up", "dialog", "alert", "modal", "confirm"],
  ["type", "fill", "enter", "input", "form"],
  ["javascript", "js", "script", "evaluate", "code"],
  ["run", "execute", "exec", "evaluate"],
  ["user agent", "useragent", "googlebot", "bot", "crawler", "pretend", "impersonate"],
  ["scrape", "extract", "crawl", "fetch", "content"],
  ["web search", "search engine", "google", "internet", "online"],
  ["news", "headline", "article"],
  ["response", "status code", "http", "200", "404", "500", "comes back", "returns"],
  ["endpoint", "api", "http", "request"],
  ["network", "request", "traffic", "xhr", "api calls"],
  ["markup", "html", "source", "dom"],
  ["console", "errors", "logs", "console messages"],
  ["resize", "size", "viewport", "window", "dimensions", "mobile", "device"],
  ["wait", "until", "appear", "shows up"],
  ["record", "recording", "codegen"],
  ["test", "codegen"],
  ["watch", "monitor", "track", "alert", "notify", "keep an eye"],
  ["watcher", "monitor"],
  ["paper", "article", "publication", "study", "research", "arxiv", "pmid", "doi", "journal"],
  ["cite", "cited", "citation", "related"],
  ["feedback", "rate", "rating", "complain", "complaint", "garbage"],
  // Tasks and plans.
  ["task", "step", "todo", "item"],
  ["plan", "planning", "request"],
  ["done", "complete", "completion", "finished", "finish", "tick off", "check off"],
  ["finished", "done", "ready", "status", "progress", "yet"],
  ["approve", "sign off", "accept", "confirm"],
  // Generic actions.
  ["create", "make", "new", "set up", "setup", "add", "submit", "leave"],
  [
    "delete",
    "remove",
    "drop",
    "erase",
    "discard",
    "rid",
    "throw away",
    "purge",
    "clear",
    "forget",
    "nuke",
    "wipe",
  ],
  ["stop", "cancel", "abort", "kill", "terminate", "halt", "end"],
  ["hung", "hang", "stuck", "frozen", "unresponsive", "force", "kill"],
  ["start", "begin", "kick off", "launch", "trigger"],
  ["push", "send", "upload", "publish"],
  ["export", "save", "write to file"],
  ["slow", "performance", "optimize", "explain"],
  ["toggle", "turn off", "enable", "disable", "switch off"],
  ["fake", "simulated", "simulate", "mock", "dummy", "pretend"],
  ["disconnect", "close", "log out", "logout", "sign out"],
  ["connect", "connection", "login", "signin"],
  ["reconnect", "re establish", "restore connection"],
  ["dead", "broken", "invalid", "validate", "validator"],
  ["member", "user", "people", "team", "workspace"],
  ["update", "change", "modify", "edit", "alter", "adjust", "fix", "patch", "reword", "rewrite"],
  ["list", "show", "all", "everything", "enumerate"],
  ["find", "search", "look up", "lookup", "locate"],
  ["fetch", "retrieve", "read", "view", "pull up", "open", "load"],
  ["more", "rest", "next", "remaining"],
  ["result", "hit", "match"],
  ["setting", "config", "configuration", "preference", "option", "default"],
  ["shell", "terminal", "command", "process", "cli"],
  ["repeat", "echo", "round trip", "mirror"],
  ["append", "add", "insert"],
  ["paragraph", "block", "text", "content"],
  ["body", "content", "markdown"],
  ["wiki", "notion", "page", "knowledge base"],
  ["knowledge base", "kb", "docs", "retrieval", "docs store"],
  ["documentation", "docs", "library", "api reference"],
  ["integration", "bot", "self", "whoami"],
  // People and companies (CRMs).
  ["contact", "person", "lead", "customer", "people"],
  ["company", "organization", "organisation", "account", "business"],
  ["deal", "opportunity", "pipeline", "sale"],
  ["engagement", "note", "meeting", "activity"],
  ["association", "link", "relate", "related", "connect"],
  // Clusters.
  ["kubernetes", "k8s", "kubectl", "cluster"],
  ["scale", "replicas", "replica"],
  ["deploy", "deployment", "rollout"],
  ["cluster", "context", "kubeconfig"],
  ["pod", "container"],
  ["crash", "crashing", "crashloop", "error", "logs", "debug", "diagnose"],
  ["switch", "change"],
  ["port forward", "forward", "tunnel", "localhost", "laptop"],
  ["namespace", "ns"],
  ["cleanup", "clean up", "tidy"],
  ["explain", "mean", "meaning", "documentation"],
  // Time and text.
  [
    "calendar",
    "schedule",
    "free",
    "busy",
    "meeting",
    "appointment",
    "agenda",
    "holiday",
    "vacation",
    "day off",
  ],
  ["readability", "reading time", "reading level", "readable", "dense", "plain language"],
  ["summary", "summarize", "tldr"],
  ["feed", "rss", "atom", "subscribe"],
];

/** A group as its terms: each member's terms, and which members may trigger it. */
interface Group {
  /** Every term of the group's members. */
  terms: string[];
  /** Each member as its terms: the group applies when a query holds all terms of one. */
  members: string[][];
}

/** Groups of words that stand for one another, as data. */
export type ConceptGroups = readonly (readonly string[])[];

/**
 * Concept groups read for searching: each member as its terms, and the groups by each term.
 * Built once per set of groups (the built-in ones, or those plus a stage's `search.synonyms`).
 */
export class ConceptIndex {
  private constructor(private readonly byTerm: ReadonlyMap<string, readonly Group[]>) {}

  static of(groups: ConceptGroups): ConceptIndex {
    const byTerm = new Map<string, Group[]>();
    for (const written of groups) {
      const members = written.map(memberTerms).filter((member) => member.length > 0);
      const group: Group = { terms: [...new Set(members.flat())], members };
      for (const member of members) {
        for (const word of member) {
          const found = byTerm.get(word) ?? [];
          if (!found.includes(group)) found.push(group);
          byTerm.set(word, found);
        }
      }
    }
    return new ConceptIndex(byTerm);
  }

  /**
   * The terms the query's terms stand for besides themselves, each with the query terms it
   * stands in for: the other terms of every group one of whose members the query holds in
   * full. None of the query's own terms is among them.
   */
  related(terms: ReadonlySet<string>): Map<string, string[]> {
    const related = new Map<string, string[]>();
    for (const word of terms) {
      for (const group of this.byTerm.get(word) ?? []) {
        const applies = group.members.some(
          (member) => member.includes(word) && member.every((part) => terms.has(part)),
        );
        if (!applies) continue;
        for (const other of group.terms) {
          if (terms.has(other)) continue;
          const by = related.get(other) ?? [];
          if (!by.includes(word)) by.push(word);
          related.set(other, by);
        }
      }
    }
    return related;
  }
}

/** A member's searched terms: its words less stop words, stemmed. */
function memberTerms(member: string): string[] {
  return words(member).flatMap((word) => term(word) ?? []);
}

/**
 * The groups written without reading the search-quality set's queries: what the real catalog's
 * tune queries are also ranked with alone (bench/search-real.ts), to show what holds beyond the
 * groups written for them.
 */
export const GENERAL_GROUPS: ConceptGroups = [
  ...GENERAL_CONCEPTS,
  ...EVERYDAY_CONCEPTS,
  ...JARGON_CONCEPTS,
];

/** The groups Toolbus ships. */
const BUILT_IN: ConceptGroups = [...CONCEPTS, ...GENERAL_GROUPS];

let builtIn: ConceptIndex | undefined;

/** The groups Toolbus ships, read once per process. */
export function builtInConcepts(): ConceptIndex {
  builtIn ??= ConceptIndex.of(BUILT_IN);
  return builtIn;
}

const withSynonyms = new WeakMap<ConceptGroups, ConceptIndex>();

/** The built-in groups and a stage's own (`search.synonyms`), read once per set of synonyms. */
export function conceptsWith(synonyms: ConceptGroups): ConceptIndex {
  if (synonyms.length === 0) return builtInConcepts();
  let index = withSynonyms.get(synonyms);
  if (!index) {
    index = ConceptIndex.of([...BUILT_IN, ...synonyms]);
    withSynonyms.set(synonyms, index);
  }
  return index;
}
