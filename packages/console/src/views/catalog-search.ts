import type { toolSearchView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { ApiError } from "../api";
import { h, notice } from "../dom";
import type { ViewContext } from "../view";
import { errorNotice } from "../widgets";
import { type Capability, cardTable, reasonSentence, type Tool, toolHref } from "./catalog-common";

/**
 * The catalog's search: `GET /v1/tools/search` with `explain`, each result with the words of
 * the query it matched and where, and for an administrator the matching tools selection left
 * out, with its reasons.
 */

type SearchAnswer = z.infer<typeof toolSearchView>;
type FoundTool = SearchAnswer["tools"][number];
type ExcludedMatch = NonNullable<SearchAnswer["excluded"]>[number];
type MatchedWord = ExcludedMatch["words"][number];

const FIELD_NAMES: Record<string, string> = {
  id: "its name",
  title: "its title",
  description: "its description",
  usageHint: "its usage hint",
  guidelines: "its guidelines",
  examples: "its examples",
  toolset: "its toolset",
  input: "its input fields",
};

function fieldList(fields: string[]): string {
  const names = fields.map((field) => FIELD_NAMES[field] ?? field);
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** One line per word of the query: where it was found, and as which of the tool's words. */
function wordsList(words: MatchedWord[]): HTMLElement {
  return h(
    "ul",
    { class: "why-matched" },
    ...words.map((word) =>
      h(
        "li",
        {},
        h("q", {}, word.word),
        word.as?.length ? ` as ${word.as.map((as) => `“${as}”`).join(", ")}` : "",
        ` in ${fieldList(word.fields)}`,
      ),
    ),
  );
}

function explanationOf(found: FoundTool): HTMLElement[] {
  const explanation = found.explanation;
  if (!explanation) return [h("span", {}, `Matched in ${fieldList(found.matched)}.`)];
  const parts: HTMLElement[] = [wordsList(explanation.words)];
  const action = explanation.action;
  if (action) {
    parts.push(
      h(
        "p",
        { class: "hint" },
        action.asked === action.does
          ? `You asked to ${action.asked}, which it does.`
          : `You asked to ${action.asked}; it does ${action.does}.`,
      ),
    );
  }
  for (const note of explanation.notes) parts.push(h("p", { class: "hint" }, note));
  return parts;
}

/** The search's results, or why there are none. Never throws for a refused query. */
export async function searchSection(
  context: ViewContext,
  query: string,
  tools: Map<string, Tool>,
  capabilities: Map<string, Capability>,
): Promise<HTMLElement> {
  const section = h(
    "section",
    { class: "search-results", "aria-labelledby": "search-results-title" },
    h("h2", { id: "search-results-title" }, "Search results for ", h("q", {}, query)),
  );
  let answer: SearchAnswer;
  try {
    answer = await context.api.get<SearchAnswer>("/v1/tools/search", {
      query: { q: query, explain: "true", limit: 20 },
      signal: context.signal,
    });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    section.append(errorNotice(error, { what: "The search was refused" }));
    return section;
  }
  if (answer.tools.length === 0) {
    section.append(notice("info", "No tool you can use matches these words."));
  } else {
    section.append(
      h("p", { class: "hint" }, `${answer.tools.length} found, best first.`),
      cardTable(
        "Tools found, best first, with why each matched",
        ["Tool", "Toolset", "Why it matched"],
        answer.tools.map((found) => [
          [
            h("a", { href: toolHref(found.id) }, found.title),
            h("div", { class: "tool-id" }, found.id),
          ],
          found.toolset,
          explanationOf(found),
        ]),
        "found",
      ),
    );
  }
  if (answer.excluded?.length) {
    section.append(
      h("h3", {}, "Matching tools left out"),
      h(
        "p",
        { class: "hint" },
        `These match too, but are not offered to the ${answer.role} role in the ${answer.mode} mode.`,
      ),
      cardTable(
        "Matching tools left out, with why",
        ["Tool", "Why it is left out", "Why it matched"],
        answer.excluded.map((left) => {
          const tool = tools.get(left.id);
          const reasons = left.reasons.map((reason) =>
            tool ? reasonSentence(reason, tool, capabilities, answer.role) : reason,
          );
          return [
            [
              h("a", { href: toolHref(left.id) }, left.title),
              h("div", { class: "tool-id" }, left.id),
            ],
            h("ul", { class: "reasons" }, ...reasons.map((reason) => h("li", {}, reason))),
            wordsList(left.words),
          ];
        }),
        "left-out",
      ),
    );
  }
  return section;
}
