/**
 * The harness section of docs/harnesses.md, generated from packages/harness/src/harness-table.ts.
 *
 *   npx tsx scripts/harness-table.ts           print the section; exit 1 if the page differs
 *   npx tsx scripts/harness-table.ts --write   rewrite the section between its markers
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { currentHarnessSection, harnessReadmeSection, withHarnessSection } from "@toolbus/harness";

/** The page that holds the generated section, between its markers. */
const PAGE = "docs/harnesses.md";
const pagePath = fileURLToPath(new URL(`../${PAGE}`, import.meta.url));
const page = readFileSync(pagePath, "utf8");
const section = harnessReadmeSection();

if (process.argv.includes("--write")) {
  const updated = withHarnessSection(page);
  if (updated !== page) writeFileSync(pagePath, updated);
  console.log(updated === page ? `${PAGE} is up to date.` : `${PAGE} updated.`);
} else {
  console.log(section);
  if (currentHarnessSection(page) !== section) {
    console.error(`${PAGE}'s harness section differs; run with --write to update it.`);
    process.exitCode = 1;
  }
}
