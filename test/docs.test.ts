import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  anchorsOf,
  checkLinks,
  githubSlug,
  type LinkProblem,
  linksOf,
  type NpmRun,
  npmRunsOf,
  startsWithCommands,
} from "./support/markdown-links";

/*
 * The documentation holds together: README.md is a front page that starts with the two
 * commands a fresh machine needs and stays short, every relative link of the README, the pages
 * under docs/ and the packages' READMEs leads somewhere (a file, and a heading for a #fragment),
 * every `npm run` script they name exists, and the README's headline figures are those of the
 * newest bench run. Each check is also shown failing on a broken input.
 */

const REPO = resolve(import.meta.dirname, "..");
const MAX_README_LINES = 400;
const FIRST_LINES = 30;
const FIRST_COMMANDS = ["npm install && npm start", "npm test"];

const mdIn = (dir: string) =>
  existsSync(join(REPO, dir))
    ? readdirSync(join(REPO, dir))
        .filter((name) => name.endsWith(".md"))
        .map((name) => `${dir}/${name}`)
    : [];

const packageReadmes = readdirSync(join(REPO, "packages"))
  .map((name) => `packages/${name}/README.md`)
  .filter((path) => existsSync(join(REPO, path)));

/** The pages the checks read: README.md, docs/*.md and packages/*\/README.md. */
const PAGES = ["README.md", ...mdIn("docs"), ...packageReadmes];

const text = (path: string) => readFileSync(join(REPO, path), "utf8");

/** A file's text, "" for a directory, undefined when nothing is there. */
function readRepo(path: string): string | undefined {
  const full = join(REPO, path);
  if (!existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? "" : readFileSync(full, "utf8");
}

const describeProblems = (problems: readonly LinkProblem[]) =>
  problems.map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`);

interface Manifest {
  name?: string;
  scripts?: Record<string, string>;
  workspaces?: string[];
}
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(REPO, dir, "package.json"), "utf8")) as Manifest;

/** What is wrong with each `npm run` a page names ([] when every script exists). */
function missingScripts(file: string, runs: readonly NpmRun[]): string[] {
  const root = manifest(".");
  const workspaces = (root.workspaces ?? []).map((dir) => ({ dir, ...manifest(dir) }));
  return runs.flatMap((run) => {
    if (run.workspace === undefined) {
      return root.scripts?.[run.script]
        ? []
        : [`${file}:${run.line}: npm run ${run.script}: no such script in package.json`];
    }
    const target = workspaces.find(
      (ws) => ws.name === run.workspace || ws.dir === run.workspace?.replace(/\/$/, ""),
    );
    if (!target) return [`${file}:${run.line}: no workspace ${run.workspace}`];
    return target.scripts?.[run.script]
      ? []
      : [
          `${file}:${run.line}: npm run ${run.script}: no such script in ${target.dir}/package.json`,
        ];
  });
}

/** The README's "Headline figures" section: what it quotes from the newest bench run. */
function headlineFigures(readme: string): string[] {
  const start = readme.indexOf("\n## Headline figures");
  if (start < 0) return [];
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  // A target (≤ 3×, ≥ 250 calls/s) is not a measurement.
  return [...section.matchAll(/(?<![≥≤] )\b\d[\d,]*(?:\.\d+)? (?:ms|calls\/s)\b/g)].map(
    (m) => m[0],
  );
}

describe("the Markdown checker", () => {
  it("makes GitHub's anchors", () => {
    expect(githubSlug("Approval: a person decides before a risky call runs")).toBe(
      "approval-a-person-decides-before-a-risky-call-runs",
    );
    expect(githubSlug("What `npm start` runs")).toBe("what-npm-start-runs");
    expect(githubSlug("Subscribe to a stage's events")).toBe("subscribe-to-a-stages-events");
    expect(githubSlug("1. Start it")).toBe("1-start-it");
    expect(githubSlug("snake_case and [a link](x.md)")).toBe("snake_case-and-a-link");
    const anchors = anchorsOf("# Notes\n## Notes\n```sh\n# not a heading\n```\n## Notes\n");
    expect([...anchors]).toEqual(["notes", "notes-1", "notes-2"]);
  });

  it("finds links outside code only", () => {
    const links = linksOf(
      "See [api](docs/api.md#routes) and `[not](a-link.md)`.\n```md\n[nor](this.md)\n```\n[ref]: docs/mcp.md\n",
    );
    expect(links).toEqual([
      { target: "docs/api.md#routes", line: 1 },
      { target: "docs/mcp.md", line: 5 },
    ]);
  });

  it("catches a link to a missing file and an anchor no heading makes", () => {
    const files: Record<string, string> = {
      "README.md": "# Toolbus\n",
      "docs/api.md": "# The REST API\n\n## Routes\n\n## Errors\n",
    };
    const read = (path: string) => files[path];
    const page = [
      "# A page",
      "[fine](api.md#routes), [also fine](../README.md), [here](#a-page)",
      "[missing](apii.md)",
      "[bad anchor](api.md#route)",
      "[bad local anchor](#nowhere)",
      "[outside](../../elsewhere.md)",
      "[external](https://example.com/x.md#whatever)",
    ].join("\n");
    expect(describeProblems(checkLinks("docs/page.md", page, read))).toEqual([
      "docs/page.md:3: apii.md: docs/apii.md does not exist",
      "docs/page.md:4: api.md#route: docs/api.md has no heading with the anchor #route",
      "docs/page.md:5: #nowhere: docs/page.md has no heading with the anchor #nowhere",
      "docs/page.md:6: ../../elsewhere.md: leads out of the repository",
    ]);
  });

  it("catches a script that does not exist, and commands that do not open the page", () => {
    const runs = npmRunsOf(
      "`npm run bench -- search`, `npm run bnech`, `npm run -w @toolbus/client build`, `npm run build -w @toolbus/nope`",
    );
    expect(runs.map((run) => [run.script, run.workspace])).toEqual([
      ["bench", undefined],
      ["bnech", undefined],
      ["build", "@toolbus/client"],
      ["build", "@toolbus/nope"],
    ]);
    const problems = missingScripts("X.md", runs);
    expect(problems).toContain("X.md:1: npm run bnech: no such script in package.json");
    expect(problems).toContain("X.md:1: no workspace @toolbus/nope");
    expect(problems).not.toContainEqual(expect.stringContaining("npm run bench:"));
    expect(
      startsWithCommands("# T\n\n    npm test\n    npm install && npm start\n", FIRST_COMMANDS, 30),
    ).toBe(false);
    expect(
      startsWithCommands(
        `${"\n".repeat(40)}npm install && npm start\nnpm test\n`,
        FIRST_COMMANDS,
        30,
      ),
    ).toBe(false);
    expect(startsWithCommands("npm install && npm start\nnpm test\n", FIRST_COMMANDS, 30)).toBe(
      true,
    );
  });
});

describe("the documentation", () => {
  it("reads every page it should", () => {
    expect(PAGES).toContain("README.md");
    expect(PAGES).toContain("docs/architecture.md");
    expect(PAGES).toContain("packages/client/README.md");
    expect(PAGES.length).toBeGreaterThan(10);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link leads to a file, and every #fragment to a heading`, () => {
      expect(describeProblems(checkLinks(page, text(page), readRepo))).toEqual([]);
    });
  }

  it("README.md starts with the two commands a fresh machine needs", () => {
    expect(startsWithCommands(text("README.md"), FIRST_COMMANDS, FIRST_LINES)).toBe(true);
  });

  it(`README.md is a front page: at most ${MAX_README_LINES} lines`, () => {
    const lines = text("README.md").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it("README.md links to every page under docs/", () => {
    const linked = new Set(linksOf(text("README.md")).map((link) => link.target.split("#")[0]));
    expect(mdIn("docs").filter((page) => !linked.has(page))).toEqual([]);
  });

  it("every page under docs/ begins with what it covers and a link back to the README", () => {
    for (const page of mdIn("docs")) {
      const head = text(page).split("\n").slice(0, 8).join("\n");
      expect(head, page).toMatch(/^# .+/);
      expect(head, page).toContain("](../README.md)");
    }
  });

  it("every `npm run <script>` in README.md and docs/*.md is a script that exists", () => {
    const problems = ["README.md", ...mdIn("docs")].flatMap((page) =>
      missingScripts(page, npmRunsOf(text(page))),
    );
    expect(problems).toEqual([]);
  });

  it("README.md's headline figures are those of bench/results/latest.md", () => {
    const figures = headlineFigures(text("README.md"));
    expect(figures.length).toBeGreaterThan(5);
    const latest = text("bench/results/latest.md");
    expect(figures.filter((figure) => !latest.includes(`| ${figure} `))).toEqual([]);
    // And the checker catches a figure the run does not have.
    expect(headlineFigures("\n## Headline figures\n| x | 12.61 ms | ≥ 250 calls/s |\n")).toEqual([
      "12.61 ms",
    ]);
    expect(latest.includes("| 12.61 ms ")).toBe(false);
  });
});

/** The names between the reserved-toolset-names markers, in backticks. */
function reservedNames(page: string): string[] {
  const list = /<!-- reserved-toolset-names -->([\s\S]*?)<!-- \/reserved-toolset-names -->/.exec(
    page,
  )?.[1];
  return [...(list ?? "").matchAll(/`([a-z][a-z0-9_]*)`/g)].map((match) => match[1] ?? "");
}

describe("docs/registering-tools.md's reserved toolset names", () => {
  it("are exactly the built-in toolsets' names", async () => {
    const { builtinToolsets } = await import("@toolbus/tools");
    const names = builtinToolsets.map((toolset) => toolset.name).sort();
    expect(reservedNames(text("docs/registering-tools.md")).sort()).toEqual(names);
    // And the checker sees a name left out or one too many.
    expect(
      reservedNames("<!-- reserved-toolset-names -->`a`, `b`<!-- /reserved-toolset-names -->"),
    ).toEqual(["a", "b"]);
    expect(reservedNames("no list")).toEqual([]);
    expect(names.length).toBeGreaterThan(0);
  });
});
