import type { ACTIONS } from "@toolbus/wire/schemas/search";
import { stemmer } from "stemmer";
import { words } from "./terms";

/**
 * What a tool does to the thing it names, read from its name: MCP servers of every kind name
 * tools verb first or verb last (`create_issue`, `list_records`, `monitor_delete`,
 * `getFileInfo`), and agents state the same verb early in a need ("remove the test rows",
 * "what did people say ..."). Agreeing on the verb tells apart the tools that share a noun,
 * which words alone cannot: `create_field` and `update_field` both hold "field".
 */
export type Action = (typeof ACTIONS)[number];

/**
 * The words that state each action, in tool names and in requests (a word of two actions is
 * the first's). Questions ("what", "who", "which") ask to read.
 */
const ACTION_WORDS: Record<Action, readonly string[]> = {
  create: [
    ..."create add new make insert register generate draft compose post write upload append".split(
      " ",
    ),
    ..."start open submit leave".split(" "),
  ],
  read: [
    ..."get read fetch show view describe retrieve inspect load info detail details lookup".split(
      " ",
    ),
    ..."pull see check what who which status".split(" "),
  ],
  list: "list all browse enumerate everything every".split(" "),
  search: "search find query locate look".split(" "),
  update: [
    ..."update edit change modify patch rename set fix replace put pause toggle move".split(" "),
    ..."tweak adjust mark".split(" "),
  ],
  delete: [
    ..."delete remove drop destroy erase clear purge discard rid trash unpublish".split(" "),
    ..."cancel close kill stop".split(" "),
  ],
};

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

/** A request states its action within its first few words; later ones are context. */
const QUERY_WORDS = 4;

/** Stemmed action word -> action (stemmed, so "removes", "listing" and "deleted" count). */
const ACTION_OF: ReadonlyMap<string, Action> = (() => {
  const map = new Map<string, Action>();
  for (const [action, list] of Object.entries(ACTION_WORDS) as [Action, readonly string[]][]) {
    for (const word of list) {
      const stem = stemmer(word);
      if (!map.has(stem)) map.set(stem, action);
    }
  }
  return map;
})();

function actionOf(word: string): Action | undefined {
  return /^[a-z]+$/.test(word) ? ACTION_OF.get(stemmer(word)) : undefined;
}

/**
 * The action a tool's name states: its first word that is an action word, whatever the
 * name's case (`github_create_issue`, `getFileInfo` -> create, read); none when no word is.
 */
export function toolAction(name: string): Action | undefined {
  for (const word of words(name)) {
    const action = actionOf(word);
    if (action) return action;
  }
  return undefined;
}

/** The action a request states in its first words; none when they state none. */
export function queryAction(query: string): Action | undefined {
  for (const word of words(query).slice(0, QUERY_WORDS)) {
    const action = actionOf(word);
    if (action) return action;
  }
  return undefined;
}

/** How a tool's action met the request's: told by `explain`. */
export interface ActionMatch {
  asked: Action;
  does: Action;
  /** What the tool's score was multiplied by. */
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
 * action, a little more for one of its kind, less for another kind; 1 when either states none.
 */
export function actionAgreement(asked: Action | undefined, tool: Action | undefined): number {
  if (!asked || !tool) return 1;
  if (asked === tool) return AGREEMENT.same;
  return KIND[asked] === KIND[tool] ? AGREEMENT.sameKind : AGREEMENT.other;
}
