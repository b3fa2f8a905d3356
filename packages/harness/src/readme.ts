import { stringify } from "yaml";
import { toolbusServerConfig } from "./enrichers";
import {
  HARNESS_TABLE,
  HARNESSES,
  type HarnessFacts,
  TABLE_TOOLS,
  type TableTool,
} from "./harness-table";
import { copilotServer } from "./render/copilot";
import { mcpServersFile } from "./render/mcp-config";

export const README_START = "<!-- harness-table:start -->";
export const README_END = "<!-- harness-table:end -->";

const LABELS: Partial<Record<TableTool, string>> = { Shell: "Shell (alias Bash)" };

/**
 * The README's harness section, generated from HARNESS_TABLE so the documentation cannot
 * drift from the data the renderers use. Excludes the markers themselves.
 */
export function harnessReadmeSection(): string {
  const { harnesses, tools, verifiedOn, notes, sources } = HARNESS_TABLE;
  const header = `| universal | ${HARNESSES.map((h) => harnesses[h].title).join(" | ")} |`;
  const rule = `| --- | ${HARNESSES.map(() => "---").join(" | ")} |`;
  const rows = TABLE_TOOLS.map(
    (tool) =>
      `| ${LABELS[tool] ?? tool} | ${HARNESSES.map((h) => cell(tools[tool][h])).join(" | ")} |`,
  );
  const mcpRow = `| MCP tool | ${HARNESSES.map((h) => code(harnesses[h].mcpToolName.replace("{server}", "<server>").replace("{tool}", "<tool>"))).join(" | ")} |`;
  const pathRow = `| agent file | ${HARNESSES.map((h) => code(harnesses[h].agentPath)).join(" | ")} |`;
  const serversRow = `| MCP servers in | ${HARNESSES.map((h) => serversCell(harnesses[h].mcpServersFile)).join(" | ")} |`;
  const envRow = `| env variable in MCP config | ${HARNESSES.map((h) => envCell(harnesses[h].envReference)).join(" | ")} |`;
  const sourceLines = HARNESSES.map(
    (h) =>
      `- ${harnesses[h].title}: ${sources[h].map((source) => `[${source.title}](${source.url})`).join(", ")}`,
  );

  return [
    "## Harnesses and agent files",
    "",
    "`POST /v1/agents/render` (or `render` from `@toolbus/harness`) writes one agent's file",
    "for Claude Code, OpenCode or GitHub Copilot from a universal tool vocabulary. Over HTTP a tool",
    "is written `Read`, `Bash`, `Todo`, `custom:<name>` (passed through verbatim) or",
    "`mcp:<server>/<tool>`. `Todo` is TodoWrite + TodoRead; one universal tool may become several",
    "native tools, duplicates are dropped in first-seen order, and a tool a harness lacks (—) is",
    "dropped with a warning.",
    "",
    "The `addToolbusCatalog` enricher adds the catalog's tools as tools of Toolbus's MCP server and",
    "writes how to reach it so the harness can connect as the file stands: the API key as",
    "`Authorization: Bearer` read from `TOOLBUS_API_KEY` and the run id header",
    "`x-toolbus-run-id` read from `TOOLBUS_RUN_ID` (rename either with `apiKeyEnv` / `runIdEnv`),",
    "in each harness's own syntax for reading the environment. Export `TOOLBUS_RUN_ID` once per",
    "session (e.g. `TOOLBUS_RUN_ID=review-$(date +%s) claude`) and every MCP call of that session",
    "lands in that run; unset, a call that names its call id lands in a run derived from the key",
    "and that id, and any other in its own `mcp-<uuid>` run. `addMcpTools` takes the same",
    '`envHeaders` (`{ "Authorization": { "env": "GH_TOKEN", "prefix": "Bearer " } }`).',
    "Where a harness reads MCP servers from a project file rather than the agent file, the answer",
    "carries it as `mcpServersFile` (`path`, `key`, `content`): merge its entries under `key` into",
    "that file.",
    "",
    ...serverExamples(),
    "",
    `This table is generated from \`packages/harness/src/harness-table.ts\`, checked against`,
    `the vendors' documentation on ${verifiedOn}. Regenerate it with`,
    "`npx tsx scripts/harness-table.ts --write`; a test fails when the two differ.",
    "",
    header,
    rule,
    ...rows,
    mcpRow,
    pathRow,
    serversRow,
    envRow,
    "",
    "Notes:",
    "",
    ...notes.map((note) => `- ${note}`),
    "",
    "Sources:",
    "",
    ...sourceLines,
  ].join("\n");
}

/** `readme` with the section between the markers replaced (appended at the end if absent). */
export function withHarnessSection(readme: string): string {
  const block = `${README_START}\n${harnessReadmeSection()}\n${README_END}`;
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) {
    return `${readme.endsWith("\n") ? readme : `${readme}\n`}\n${block}\n`;
  }
  return `${readme.slice(0, start)}${block}${readme.slice(end + README_END.length)}`;
}

/** The section currently between the markers, or undefined when they are missing. */
export function currentHarnessSection(readme: string): string | undefined {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) return undefined;
  return readme
    .slice(start + README_START.length, end)
    .replace(/^\n/, "")
    .replace(/\n$/, "");
}

/** What each harness's files say about Toolbus's server, written by the renderers themselves. */
function serverExamples(): string[] {
  const url = "https://toolbus.example.com/mcp";
  const toolMap = {
    allTools: false,
    tools: [],
    mcpServers: { toolbus: toolbusServerConfig(url) },
    warnings: [],
  };
  const fileExample = (harness: "claude-code" | "opencode") => {
    const file = mcpServersFile(harness, toolMap);
    return [
      `${HARNESS_TABLE.harnesses[harness].title}, \`${file?.path}\`:`,
      "",
      "```json",
      (file?.content ?? "").trimEnd(),
      "```",
    ];
  };
  const copilot = stringify(
    { "mcp-servers": { toolbus: copilotServer(toolbusServerConfig(url), ["web_search"]) } },
    { lineWidth: 0 },
  );
  return [
    `How each harness is told to reach Toolbus at \`${url}\`:`,
    "",
    ...fileExample("claude-code"),
    "",
    ...fileExample("opencode"),
    "",
    `${HARNESS_TABLE.harnesses.copilot.title}, in the agent file's frontmatter:`,
    "",
    "```yaml",
    copilot.trimEnd(),
    "```",
  ];
}

function serversCell(file: HarnessFacts["mcpServersFile"]): string {
  return file === null ? "the agent file" : `${code(file.path)} (${code(file.key)})`;
}

function envCell(reference: HarnessFacts["envReference"]): string {
  const written = (template: string) =>
    code(template.replace("{name}", `${reference.namePrefix}VAR`));
  return reference.required === reference.optional
    ? `${written(reference.required)} (unset: empty)`
    : `${written(reference.required)}, optional ${written(reference.optional)}`;
}

function cell(names: readonly string[]): string {
  return names.length === 0 ? "—" : names.map(code).join(", ");
}

function code(text: string): string {
  return `\`${text}\``;
}
