import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  currentHarnessSection,
  harnessReadmeSection,
  README_END,
  README_START,
  withHarnessSection,
} from "./readme";

/** The page the generated section lives in (scripts/harness-table.ts writes it there). */
const README = new URL("../../../docs/harnesses.md", import.meta.url);

describe("the harness table of docs/harnesses.md", () => {
  it("is exactly what the data file generates (npx tsx scripts/harness-table.ts --write)", () => {
    const readme = readFileSync(README, "utf8");
    expect(currentHarnessSection(readme)).toBe(harnessReadmeSection());
  });

  it("lists every row of the table", () => {
    const section = harnessReadmeSection();
    expect(section).toContain(
      "| TodoRead | `TaskList`, `TaskGet`, `TaskUpdate` | `todoread` | `todo` |",
    );
    expect(section).toContain("| LSP | `LSP` | `lsp` | — |");
    expect(section).toContain(
      "| MCP tool | `mcp__<server>__<tool>` | `<server>_<tool>` | `<server>/<tool>` |",
    );
    expect(section).toContain("2026-11-21");
  });

  it("replaces only what is between the markers, or appends the section", () => {
    const readme = `# Title\n\nBefore.\n\n${README_START}\nstale\n${README_END}\n\nAfter.\n`;
    const updated = withHarnessSection(readme);
    expect(updated.startsWith("# Title\n\nBefore.\n\n")).toBe(true);
    expect(updated.endsWith(`${README_END}\n\nAfter.\n`)).toBe(true);
    expect(currentHarnessSection(updated)).toBe(harnessReadmeSection());
    expect(withHarnessSection(updated)).toBe(updated);
    expect(currentHarnessSection(withHarnessSection("# Only a title\n"))).toBe(
      harnessReadmeSection(),
    );
  });
});
