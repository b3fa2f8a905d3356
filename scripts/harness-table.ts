/**
 * The README's harness table, generated from packages/core/src/harness/harness-table.ts.
 *
 *   npx tsx scripts/harness-table.ts           print the section; exit 1 if the README differs
 *   npx tsx scripts/harness-table.ts --write   rewrite the section between its markers
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  currentHarnessSection,
  harnessReadmeSection,
  withHarnessSection,
} from "@toolbus/core/harness";

const readmePath = fileURLToPath(new URL("../README.md", import.meta.url));
const readme = readFileSync(readmePath, "utf8");
const section = harnessReadmeSection();

if (process.argv.includes("--write")) {
  const updated = withHarnessSection(readme);
  if (updated !== readme) writeFileSync(readmePath, updated);
  console.log(updated === readme ? "README.md is up to date." : "README.md updated.");
} else {
  console.log(section);
  if (currentHarnessSection(readme) !== section) {
    console.error("README.md's harness section differs; run with --write to update it.");
    process.exitCode = 1;
  }
}
