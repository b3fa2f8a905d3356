import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { SearchField } from "./fields";

/** Words of an example's input that are indexed, at most: enough to show its vocabulary. */
const EXAMPLE_CHARS = 400;

/**
 * Characters of what a tool takes (its input's property names and their descriptions) that
 * are indexed, at most: enough for its parameters' vocabulary, not a long schema's every word.
 */
const INPUT_CHARS = 400;
/** ... of each property's description: one long description does not crowd out the names after it. */
const DESCRIPTION_CHARS = 200;

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
    input: inputText(tool.inputSchema),
  };
}

/**
 * What a tool takes, in words: each property's name (its words: `start_date`, `maxResults`)
 * and the start of its description, then the same of the properties nested one level down
 * (in an object or an array's items); at most INPUT_CHARS characters.
 */
function inputText(schema: Record<string, unknown>): string {
  const top = propertiesOf(schema);
  const nested = top.flatMap(([, property]) => {
    const own = propertiesOf(property);
    return own.length > 0 ? own : propertiesOf(objectOr(property.items));
  });
  const all = [...top, ...nested];
  const parts: string[] = [];
  let left = INPUT_CHARS;
  const texts = all.flatMap(([name, property]) => [
    name,
    typeof property.description === "string"
      ? property.description.slice(0, DESCRIPTION_CHARS)
      : undefined,
  ]);
  for (const text of texts) {
    if (left <= 0) break;
    if (typeof text !== "string" || text.length === 0) continue;
    const part = text.slice(0, left);
    parts.push(part);
    left -= part.length + 1;
  }
  return parts.join("\n");
}

type SchemaObject = Record<string, unknown>;

function objectOr(value: unknown): SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as SchemaObject)
    : {};
}

/** A schema's properties, each as a schema object (anything else read as an empty one). */
function propertiesOf(schema: SchemaObject): Array<[string, SchemaObject]> {
  return Object.entries(objectOr(schema.properties)).map(([name, value]) => [
    name,
    objectOr(value),
  ]);
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
