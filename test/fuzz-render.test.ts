import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { expectSafeResponse } from "./support/hostile";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Agent names, descriptions and prompts full of YAML's special characters go through
// POST /v1/agents/render: the answer is a 200 whose frontmatter reads back to exactly what was
// sent, or a 400, never anything else.

let system: TestToolbus;

beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system?.stop(), 60_000);

interface AgentFile {
  harness: string;
  path: string;
  content: string;
}

const yamlish = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc
    .array(
      fc.constantFrom(
        ":",
        ": ",
        "#",
        " #",
        "'",
        '"',
        "\n",
        "\r\n",
        "\t",
        "---",
        "...",
        "- ",
        "? ",
        "|",
        ">",
        "&a",
        "*a",
        "!!str",
        "%YAML",
        "@",
        "`",
        "{",
        "}",
        "[",
        "]",
        ",",
        "\\",
        "null",
        "true",
        "0x1F",
        "1e3",
        "~",
        "é",
        "😀",
        "\u2028",
        "\u0085",
        "\uFEFF",
        "\u0000",
        " ",
        "x",
      ),
      { minLength: 1, maxLength: 20 },
    )
    .map((parts) => parts.join("")),
);
const agentName = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
  fc.string({ maxLength: 70 }),
);
const harness = fc.constantFrom("claude-code", "opencode", "copilot", "all");
const format = fc.constantFrom(undefined, "markdown", "yaml", "json");

function frontmatterOf(file: AgentFile, fileFormat: string | undefined): Record<string, unknown> {
  if (fileFormat === "json") return JSON.parse(file.content) as Record<string, unknown>;
  if (fileFormat === "yaml") return parse(file.content) as Record<string, unknown>;
  const match = /^---\n([\s\S]*?\n)---\n\n/.exec(file.content);
  if (!match) throw new Error(`no frontmatter in ${JSON.stringify(file.content)}`);
  return parse(match[1] ?? "") as Record<string, unknown>;
}

describe("fuzz: POST /v1/agents/render", () => {
  it("answers any name, description and prompt with a faithful 200 or a 400", async () => {
    let rendered = 0;
    await fc.assert(
      fc.asyncProperty(
        agentName,
        yamlish,
        yamlish,
        harness,
        format,
        async (name, description, prompt, which, fileFormat) => {
          const body = {
            harness: which,
            agent: { name, description, prompt, tools: ["Read", "Bash"] },
            ...(fileFormat ? { format: fileFormat } : {}),
          };
          const response = await system.request("/v1/agents/render", {
            method: "POST",
            json: body,
          });
          const { status, text } = await expectSafeResponse(response, {
            input: JSON.stringify(body),
          });
          expect([200, 400]).toContain(status);
          if (status !== 200) return;
          rendered += 1;
          const parsed = JSON.parse(text) as AgentFile | { files: AgentFile[] };
          const files = "files" in parsed ? parsed.files : [parsed];
          for (const file of files) {
            const front = frontmatterOf(file, fileFormat);
            // The wire schema trims descriptions; the rest must survive byte for byte.
            expect(front.description).toBe(description.trim());
            if (file.harness !== "opencode") expect(front.name).toBe(name);
            expect(file.path).toContain(name);
            if (fileFormat === "json" || fileFormat === "yaml") expect(front.prompt).toBe(prompt);
            else if (prompt !== "") {
              const body = prompt.endsWith("\n") ? prompt : `${prompt}\n`;
              expect(file.content.endsWith(body)).toBe(true);
            }
          }
        },
      ),
      { numRuns: 120 },
    );
    expect(rendered).toBeGreaterThan(10);
  }, 60_000);
});
