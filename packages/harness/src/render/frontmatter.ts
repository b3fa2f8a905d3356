import { stringify } from "yaml";
import { HARNESS_TABLE, type Harness } from "../harness-table";
import type { OutputFormat } from "./output-format";

const EXTENSIONS: Record<OutputFormat, string> = { markdown: ".md", json: ".json", yaml: ".yaml" };

/**
 * Where `harness` reads an agent called `name`. Harnesses read the Markdown form; JSON and
 * YAML keep the same place with their own extension.
 */
export function agentFilePath(harness: Harness, name: string, format: OutputFormat): string {
  const path = HARNESS_TABLE.harnesses[harness].agentPath.replace("<name>", () => name);
  return `${path.slice(0, -".md".length)}${EXTENSIONS[format]}`;
}

/**
 * The file's text. Frontmatter goes through a YAML serializer, never string concatenation, so
 * names and descriptions with colons, quotes, `#`, newlines or any Unicode read back as they
 * were written. JSON and YAML carry the body as `prompt`, the field name Claude Code's
 * `--agents` JSON and OpenCode's JSON agents use for it.
 */
export function formatAgentFile(
  frontmatter: Record<string, unknown>,
  body: string,
  format: OutputFormat,
): string {
  switch (format) {
    case "markdown": {
      const text = body.endsWith("\n") || body === "" ? body : `${body}\n`;
      return `---\n${yaml(frontmatter)}---\n\n${text}`;
    }
    case "json":
      return `${JSON.stringify({ ...frontmatter, prompt: body }, null, 2)}\n`;
    case "yaml":
      return yaml({ ...frontmatter, prompt: body });
  }
}

function yaml(value: Record<string, unknown>): string {
  // lineWidth 0: long descriptions stay on one line instead of being folded.
  return stringify(value, { lineWidth: 0 });
}
