import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { SearchField } from "./fields";

/** Words of an example's input that are indexed, at most: enough to show its vocabulary. */
const EXAMPLE_CHARS = 400;

/** What a tool is searched by, field by field: the index reads it, and an explanation rereads it. */
export function documentOf(
  tool: ToolSpec,
  toolsetDescription: string | undefined,
): Record<SearchField, string> {
  return {
    id: tool.id,
    title: tool.title,
    description: tool.description,
    usageHint: tool.usageHint,
    guidelines: [...tool.guidelines.do, ...tool.guidelines.dont].join("\n"),
    examples: tool.examples
      .map((example) => `${example.title} ${leafText(example.input).slice(0, EXAMPLE_CHARS)}`)
      .join("\n"),
    toolset: `${tool.toolset} ${toolsetDescription ?? ""}`,
  };
}

/** Typos: one edit in 5-9 letter words, two from 10 on (as a stem: "forcast" meets "forecast"). */
export const typoEdits = (word: string) => (word.length < 5 ? false : word.length < 10 ? 1 : 2);

/** The strings in an example's input, without its JSON punctuation or property names. */
function leafText(value: unknown, budget = { left: EXAMPLE_CHARS }): string {
  if (budget.left <= 0) return "";
  if (typeof value === "string") {
    budget.left -= value.length;
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => leafText(item, budget)).join(" ");
  if (typeof value === "object" && value !== null) {
    return Object.values(value)
      .map((item) => leafText(item, budget))
      .join(" ");
  }
  return "";
}
