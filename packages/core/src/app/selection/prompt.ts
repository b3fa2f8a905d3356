import { CALL_TOOL, SEARCH_TOOLS } from "@toolbus/wire/mcp-surface";
import type { Category, ToolSpec } from "@toolbus/wire/model/tool";
import { ValidationError } from "../../errors";
import { canonicalJson } from "../../util/canonical-json";
import { byCategoryThenId, type Selection } from "./select";

export interface PromptOptions {
  /** Largest Markdown size in UTF-8 bytes. Over it, guidelines go first, then examples. */
  budgetBytes?: number;
}

/** One tool as the prompt section describes it; what was dropped is left empty. */
export interface PromptTool {
  id: string;
  title: string;
  category: Category;
  description: string;
  whenToUse: string;
  guidelines: { do: string[]; dont: string[] };
  examples: Array<{ title: string; input: unknown }>;
}

export interface RenderedPrompt {
  /** UTF-8 Markdown with `\n` newlines and one trailing newline. */
  markdown: string;
  /** The same content as data, after any drops. */
  json: { tools: PromptTool[] };
  /** Tool ids that lost their guidelines / examples to the budget, in the order dropped. */
  dropped: { guidelines: string[]; examples: string[] };
  /** Size of `markdown` in UTF-8 bytes. */
  bytes: number;
  /** Still larger than `budgetBytes` with every guideline and example dropped. */
  overBudget: boolean;
}

const CATEGORY_HEADINGS: Record<Category, string> = {
  research: "Research",
  reference: "Reference",
  enhance: "Enhance",
  publish: "Publish",
  utility: "Utility",
};

const HEADER =
  "# Optional tools\n\nThese tools are optional: use one when it clearly helps with the task, and carry on without it when it does not.\n";
const NONE = "\nNo optional tools are available.\n";

/**
 * The optional-tools section of an agent's prompt, from the available tools of a selection.
 * Byte-deterministic (same tools in any order give the same bytes) so a provider can cache
 * the prompt prefix it sits in. A budget never removes a tool: an agent that cannot see a
 * tool cannot use it, while one without the guidelines still can.
 */
export function renderPrompt(
  selection: Pick<Selection, "available">,
  options: PromptOptions = {},
): RenderedPrompt {
  const { budgetBytes } = options;
  if (budgetBytes !== undefined && !(Number.isSafeInteger(budgetBytes) && budgetBytes >= 0)) {
    throw new ValidationError("budgetBytes must be a whole number of bytes, 0 or more.", {
      details: [{ path: "budgetBytes", message: "Expected an integer >= 0." }],
    });
  }
  const tools = selection.available
    .filter((tool) => tool.optionality === "optional")
    .sort(byCategoryThenId)
    .map(promptTool);

  const blocks = tools.map(toolBlock);
  const sizes = blocks.map(utf8Bytes);
  const fixed = utf8Bytes(frame(tools));
  let bytes = fixed + sizes.reduce((sum, size) => sum + size, 0);
  const dropped: RenderedPrompt["dropped"] = { guidelines: [], examples: [] };

  if (budgetBytes !== undefined) {
    const steps: Array<["guidelines" | "examples", (tool: PromptTool) => boolean]> = [
      ["guidelines", dropGuidelines],
      ["examples", dropExamples],
    ];
    for (const [what, drop] of steps) {
      // From the last tool backwards: the first categories keep their detail longest.
      for (let i = tools.length - 1; i >= 0 && bytes > budgetBytes; i--) {
        const tool = tools[i] as PromptTool;
        if (!drop(tool)) continue;
        dropped[what].push(tool.id);
        const block = toolBlock(tool);
        bytes += utf8Bytes(block) - (sizes[i] as number);
        blocks[i] = block;
        sizes[i] = utf8Bytes(block);
      }
    }
  }

  const markdown = assemble(tools, blocks);
  const total = utf8Bytes(markdown);
  return {
    markdown,
    json: { tools },
    dropped,
    bytes: total,
    overBudget: budgetBytes !== undefined && total > budgetBytes,
  };
}

/**
 * The section for agents on the search surface (`/mcp?surface=search`): the two tools that
 * reach the catalog, not the catalog itself. The same bytes whatever the catalog holds, so
 * the prompt prefix it sits in stays cached as tools come and go.
 */
export function renderSearchPrompt(options: PromptOptions = {}): RenderedPrompt {
  const markdown = SEARCH_SECTION;
  const bytes = utf8Bytes(markdown);
  return {
    markdown,
    json: { tools: [] },
    dropped: { guidelines: [], examples: [] },
    bytes,
    overBudget: options.budgetBytes !== undefined && bytes > options.budgetBytes,
  };
}

const SEARCH_SECTION = `${HEADER}
Optional tools are not listed here: find them when a task needs one.

- \`${SEARCH_TOOLS}\` takes what you need in a few words (e.g. "weather forecast for a city", "open a ticket in the issue tracker") and returns the best matches you can call: each with its id, what it does, when to use it and the JSON Schema of its input.
- \`${CALL_TOOL}\` runs one: \`{ "tool": "<id>", "arguments": { ...its input } }\`. It returns what the tool returned; a failed tool says what to do next.

Search before saying a task cannot be done; if nothing fits, carry on without a tool.
`;

function promptTool(spec: ToolSpec): PromptTool {
  return {
    id: spec.id,
    title: spec.title,
    category: spec.category,
    description: spec.description,
    whenToUse: spec.usageHint,
    guidelines: { do: [...spec.guidelines.do], dont: [...spec.guidelines.dont] },
    examples: spec.examples.map((example) => ({ title: example.title, input: example.input })),
  };
}

function dropGuidelines(tool: PromptTool): boolean {
  if (tool.guidelines.do.length === 0 && tool.guidelines.dont.length === 0) return false;
  tool.guidelines = { do: [], dont: [] };
  return true;
}

function dropExamples(tool: PromptTool): boolean {
  if (tool.examples.length === 0) return false;
  tool.examples = [];
  return true;
}

// Every piece below starts and ends with "\n", so joining them gives exactly one blank line
// between blocks and one trailing newline.

/** Everything but the tool blocks: the header and a heading per category present. */
function frame(tools: readonly PromptTool[]): string {
  if (tools.length === 0) return HEADER + NONE;
  return HEADER + categoriesOf(tools).map(categoryHeading).join("");
}

function assemble(tools: readonly PromptTool[], blocks: readonly string[]): string {
  if (tools.length === 0) return HEADER + NONE;
  let markdown = HEADER;
  let current: Category | undefined;
  for (const [i, tool] of tools.entries()) {
    if (tool.category !== current) {
      current = tool.category;
      markdown += categoryHeading(current);
    }
    markdown += blocks[i];
  }
  return markdown;
}

function categoriesOf(tools: readonly PromptTool[]): Category[] {
  return tools.map((t) => t.category).filter((c, i, all) => i === 0 || all[i - 1] !== c);
}

function categoryHeading(category: Category): string {
  return `\n## ${CATEGORY_HEADINGS[category]}\n`;
}

function toolBlock(tool: PromptTool): string {
  let block = `\n### ${inline(tool.title)} (\`${tool.id}\`)\n`;
  block += `\n${paragraph(tool.description)}\n`;
  block += `\n**When to use:** ${paragraph(tool.whenToUse)}\n`;
  if (tool.guidelines.do.length > 0) block += list("**Do:**", tool.guidelines.do.map(inline));
  if (tool.guidelines.dont.length > 0)
    block += list("**Don't:**", tool.guidelines.dont.map(inline));
  if (tool.examples.length > 0) {
    block += list(
      "**Examples:**",
      tool.examples.map((e) => `${inline(e.title)}: ${codeSpan(compactJson(e.input))}`),
    );
  }
  return block;
}

function list(label: string, items: readonly string[]): string {
  return `\n${label}\n${items.map((item) => `- ${item}\n`).join("")}`;
}

/** One line: whitespace (newlines included) collapsed, so list items and headings hold. */
function inline(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * Multi-line text kept as written, normalised to `\n`, without trailing spaces or runs of
 * blank lines. A line starting with `#` is escaped: tool text must not add headings to the
 * section's own structure.
 */
function paragraph(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trimEnd().replace(/^(\s{0,3})#/, "$1\\#"))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Keys sorted: a store may hand object fields back in another order. */
function compactJson(value: unknown): string {
  return canonicalJson(value === undefined ? {} : value) ?? "{}";
}

/** An inline code span that holds any text, backticks included (CommonMark's rule). */
function codeSpan(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longestRun + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
