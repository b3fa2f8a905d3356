import type { ACTIONS } from "@toolbus/wire/schemas/search";
import { isStopWord, words } from "./words";

/**
 * What a tool does to the thing it names, read from its name: MCP servers of every kind name
 * tools verb first or verb last (`create_issue`, `list_records`, `monitor_delete`,
 * `getFileInfo`), and agents state the same verb early in a need ("remove the test rows",
 * "what did people say ..."). Agreeing on the verb tells apart the tools that share a noun,
 * which words alone cannot: `create_field` and `update_field` both hold "field".
 */
export type Action = (typeof ACTIONS)[number];

/**
 * The words and phrases that state each action, in tool names and in requests, as written:
 * matched whole, not stemmed, so "news", "settings" and "posts" state nothing. A phrase is
 * read before its first word ("get rid of" deletes, "set up" creates). Words that state
 * different things on different objects are left out: "open" (a file, a tab, an issue),
 * "close" (a tab, an issue, a connection). This says what a request asks to do; what its
 * words may also be called in tools is the concept groups' (concepts.ts), which search by
 * them and are wider ("forget" finds deleting tools, "open" reading ones).
 */
const ACTION_WORDS: Record<Action, readonly string[]> = {
  create: [
    ..."create add new make insert register generate draft compose post write upload".split(" "),
    ..."append submit leave".split(" "),
    "set up",
  ],
  read: [
    ..."get read fetch view describe retrieve inspect load info details lookup see".split(" "),
    ..."check".split(" "),
    "pull up",
  ],
  list: "list show all browse enumerate everything every".split(" "),
  search: ["search", "find", "query", "locate", "look up", "look for"],
  update: [
    ..."update edit change modify patch rename set replace put toggle move tweak".split(" "),
    ..."adjust alter fix reword rewrite".split(" "),
  ],
  delete: [
    ..."delete remove drop destroy erase purge discard trash clear wipe nuke forget".split(" "),
    "get rid",
    "throw away",
  ],
};

/** A question asks to read: "what did people say ...", "who is on the team", "which files ...". */
const QUESTION_WORDS = new Set(["what", "who", "which"]);

/** Actions that do the same to their object: reading, listing and searching all leave it be. */
const KIND: Record<Action, "reads" | "writes" | "deletes"> = {
  create: "writes",
  update: "writes",
  delete: "deletes",
  read: "reads",
  list: "reads",
  search: "reads",
};

/**
 * What a tool's score is multiplied by when the request's action is its own, of its kind, or
 * of another kind. Chosen on the real catalog's tune queries only (bench/search-real.ts).
 */
const AGREEMENT = { same: 1.2, sameKind: 1.1, other: 0.8 };

/**
 * A request states its action within its first few words that are not stop words ("could you
 * help me remove ..." reads "help", "remove"); later ones are context.
 */
const QUERY_WORDS = 4;

/** Each action word or phrase, as its words, longest first, to the action it states. */
const PHRASES: readonly { words: readonly string[]; action: Action }[] = (
  Object.entries(ACTION_WORDS) as [Action, readonly string[]][]
)
  .flatMap(([action, list]) => list.map((phrase) => ({ words: phrase.split(" "), action })))
  .sort((a, b) => b.words.length - a.words.length);

/** The action stated by the words at `at` (a phrase, a single word), if any. */
function actionAt(list: readonly string[], at: number): Action | undefined {
  for (const phrase of PHRASES) {
    if (phrase.words.every((word, i) => list[at + i] === word)) return phrase.action;
  }
  return undefined;
}

/**
 * The action a tool's name states: its first action word, whatever the name's case
 * (`github_create_issue`, `getFileInfo` -> create, read); none when no word is one.
 */
export function toolAction(name: string): Action | undefined {
  const parts = words(name).filter((word) => !word.includes("_"));
  for (let at = 0; at < parts.length; at++) {
    const action = actionAt(parts, at);
    if (action) return action;
  }
  return undefined;
}

/** The action a request states in its first words (a question reads); none when they state none. */
export function queryAction(query: string): Action | undefined {
  const all = words(query);
  let seen = 0;
  for (let at = 0; at < all.length && seen < QUERY_WORDS; at++) {
    const word = all[at] as string;
    if (QUESTION_WORDS.has(word)) return "read";
    const action = actionAt(all, at);
    if (action) return action;
    if (!isStopWord(word)) seen++;
  }
  return undefined;
}

/** How a tool's action met the request's: told by `explain`. */
export interface ActionMatch {
  asked: Action;
  does: Action;
  /** What the tool's words-and-fields score was multiplied by. */
  weight: number;
}

/** The request's and the tool's actions and the factor they make; undefined unless both state one. */
export function actionMatch(
  asked: Action | undefined,
  does: Action | undefined,
): ActionMatch | undefined {
  return asked && does ? { asked, does, weight: actionAgreement(asked, does) } : undefined;
}

/**
 * The factor a tool's score gets for its action beside the request's: more for the same
 * action, a little more for another that does the same kind of thing (reads, or writes), less
 * for another kind; 1 when either states none.
 */
export function actionAgreement(asked: Action | undefined, tool: Action | undefined): number {
  if (!asked || !tool) return 1;
  if (asked === tool) return AGREEMENT.same;
  return KIND[asked] === KIND[tool] ? AGREEMENT.sameKind : AGREEMENT.other;
}
