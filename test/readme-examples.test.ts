import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { COMMANDS } from "@toolbus/client/cli";
import { checkToolSettings, parseStageConfig } from "@toolbus/core/config";
import { builtinTools } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseCommandLine } from "../packages/client/src/cli/args";
import { currentHarnessSection, harnessReadmeSection } from "../packages/harness/src/readme";
import { stackConfigFor } from "../stacks/config";
import dev from "../stacks/config/dev.json";
import { runToolbusCli } from "./support/cli";
import { type StartedToolbus, spawnToolbus } from "./support/npm-start";

/*
 * Every fenced block of README.md, packages/client/README.md and docs/*.md, run or checked.
 *
 * - Shell blocks run in bash (-euo pipefail: an unset variable or a failing command fails the
 *   block) against one `npm start` (its entry point, as the other end-to-end tests start it)
 *   whose state folder is `.toolbus` of a stand-in checkout: a folder whose node_modules and
 *   packages are this repository's, so `cat .toolbus/admin-key`, `require("./.toolbus/local.json")`
 *   and `npx --no-install toolbus` work as the README says. `localhost:8787` / `127.0.0.1:8787`
 *   become that server's address, and `/path/to/toolbus` the stand-in checkout. `KEY` is the
 *   admin key, as the README's tour sets it for the rest of the tour and for every page under
 *   docs/. Each curl's HTTP status is
 *   recorded: 2xx, or the status its `# -> NNN` comment line announces. A command that follows
 *   a stream (`curl -N`, `toolbus listen`, `--follow`) is interrupted after a few seconds, as
 *   Ctrl-C would, and that is a success.
 * - The client README's blocks run in a project of their own: its install block packs the
 *   client and installs the tarball there; its TypeScript then runs (tsx) against what it
 *   installed. Names a block uses without making them (`toolbus`, the client of the first
 *   block; `model`, `openai`, `chatModel`, `messages`, `prompt`, `signal`) are given: the
 *   model, OpenAI and LangChain objects are stand-ins for a third-party account, scripted to
 *   call readability_analyzer, so the block's own code runs against Toolbus.
 * - JSON: an agent definition or render request is rendered with `toolbus render-agent`; a
 *   stage configuration is validated with the parser `npm start` uses (tool settings included),
 *   a fragment inside `{ }` with the stage's or the stack's; a fragment of the stage
 *   configuration (the approvals rules) is also what the server runs with.
 * - Not run, checked: blocks that need AWS (`npx sst ...`, `aws ...` without `--endpoint-url`)
 *   against the subcommands and flags written down below; blocks marked
 *   `<!-- example: third-party -->` (they need a service of yours) by their curl flags, routes
 *   (the server's /openapi.json) and JSON bodies; `npm install` / `npm test`, which cannot run
 *   inside a test; the harness section, which must be what its generator writes.
 * - Marked `<!-- example: output -->` (what something prints) or `<!-- example: fragment -->`
 *   (part of a file), or fenced without a language: text. JSON among them must still parse.
 *
 * A block that fails names its file and line.
 */

const REPO = resolve(import.meta.dirname, "..");
/** The READMEs and every page under docs/: a page added there is checked the same way. */
const READMES = [
  "README.md",
  "packages/client/README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => `docs/${file}`),
];
const TSX = join(REPO, "node_modules/tsx/dist/cli.mjs");
/** The workspace packages (`packages/<name>`), as the root package.json lists them. */
const WORKSPACES = (
  JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { workspaces: string[] }
).workspaces;
/** How long a command that follows a stream runs before it is interrupted. */
const FOLLOW_SECONDS = 3;

// ---------------------------------------------------------------------------------------------
// Finding the blocks

const MARKS = ["output", "fragment", "third-party"] as const;
type Mark = (typeof MARKS)[number];

interface Block {
  file: string;
  /** The line of the opening fence, counting from 1. */
  line: number;
  lang: string;
  text: string;
  mark?: Mark;
  /** Inside the generated harness section. */
  generated: boolean;
}

function extractBlocks(file: string, source: string): Block[] {
  const lines = source.split("\n");
  const blocks: Block[] = [];
  let generated = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (line.includes("<!-- harness-table:start -->")) generated = true;
    if (line.includes("<!-- harness-table:end -->")) generated = false;
    const open = /^ {0,3}```([\w-]*)\s*$/.exec(line);
    if (!open) continue;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !/^ {0,3}```\s*$/.test(lines[index] ?? ""); index++) {
      body.push(lines[index] ?? "");
    }
    if (index >= lines.length) throw new Error(`${file}:${start + 1}: a fence that never closes`);
    const above = /^<!-- example: ([\w-]+) -->$/.exec((lines[start - 1] ?? "").trim());
    if (above && !(MARKS as readonly string[]).includes(above[1] ?? "")) {
      throw new Error(`${file}:${start}: unknown mark "${above[1]}" (known: ${MARKS.join(", ")})`);
    }
    blocks.push({
      file,
      line: start + 1,
      lang: open[1] ?? "",
      text: `${body.join("\n")}\n`,
      ...(above ? { mark: above[1] as Mark } : {}),
      generated,
    });
  }
  return blocks;
}

const where = (block: Block) => `${block.file}:${block.line}`;

// ---------------------------------------------------------------------------------------------
// Shell words and commands

interface Command {
  /** The words, quotes removed (a `$(...)` stays as written). */
  words: string[];
  /** The command as written, continuation lines joined. */
  source: string;
  /** The first line after it, when it is a comment (`# -> 202 ...`). */
  comment?: string;
}

/** The block's commands in order: split at newlines, `&&`, `||`, `;` and `|`; comments dropped. */
function shellCommands(text: string): Command[] {
  const commands: Command[] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let source = "";
  let i = 0;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push({ words, source: source.trim() });
    words = [];
    source = "";
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "\\" && text[i + 1] === "\n") {
      source += " ";
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error("an unclosed single quote");
      word += text.slice(i + 1, end);
      source += text.slice(i, end + 1);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"' || (c === "$" && text[i + 1] === "(")) {
      const end = closing(text, i);
      word += c === '"' ? text.slice(i + 1, end) : text.slice(i, end + 1);
      source += text.slice(i, end + 1);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === "#" && !inWord) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
      continue;
    }
    if (c === "\n" || c === ";" || c === "|" || (c === "&" && text[i + 1] === "&")) {
      const ended = commands.length;
      endCommand();
      if (c === "\n" && commands.length > ended) {
        const next =
          text
            .slice(i + 1)
            .split("\n")[0]
            ?.trim() ?? "";
        if (next.startsWith("#")) (commands[commands.length - 1] as Command).comment = next;
      }
      i += c === "&" || (c === "|" && text[i + 1] === "|") ? 2 : 1;
      continue;
    }
    if (c === " " || c === "\t") {
      endWord();
      source += c;
      i++;
      continue;
    }
    word += c;
    source += c;
    inWord = true;
    i++;
  }
  endCommand();
  return commands;
}

/** Where the double-quoted string or `$(` at `start` ends (nesting counted). */
function closing(text: string, start: number): number {
  if (text[start] === '"') {
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === "$" && text[i + 1] === "(") i = closing(text, i);
      else if (text[i] === '"') return i;
    }
  } else {
    let depth = 0;
    for (let i = start + 1; i < text.length; i++) {
      if (text[i] === "(") depth++;
      else if (text[i] === ")" && --depth === 0) return i;
      else if (text[i] === "'") i = text.indexOf("'", i + 1);
      else if (text[i] === '"') i = closing(text, i);
    }
  }
  throw new Error(`unclosed ${text[start]} in: ${text.slice(start, start + 60)}`);
}

/** The words of a command without leading `NAME=value` assignments. */
const program = (words: readonly string[]) => {
  const at = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  return at < 0 ? [] : words.slice(at);
};

// ---------------------------------------------------------------------------------------------
// What commands that are not run are checked against

/**
 * SST v2's subcommands, with how many positional arguments each takes and its own flags, as
 * `sst <command> --help` of the version in package.json (2.49) prints them; every command
 * also takes the global flags.
 */
const SST_COMMANDS: Record<string, { args: [number, number]; flags: readonly string[] }> = {
  deploy: { args: [0, 1], flags: ["--from"] },
  remove: { args: [0, 1], flags: ["--from"] },
  diff: { args: [0, 0], flags: [] },
  "secrets set": { args: [2, 2], flags: ["--fallback"] },
  "secrets get": { args: [1, 1], flags: ["--fallback"] },
  "secrets list": { args: [0, 1], flags: [] },
  "secrets remove": { args: [1, 1], flags: ["--fallback"] },
  "secrets load": { args: [1, 1], flags: [] },
};
const SST_GLOBAL = ["--stage", "--profile", "--region", "--role", "--verbose"];
/** SST's flags that take no value. */
const SST_BOOLEAN = ["--fallback", "--verbose", "--future"];

/**
 * The AWS CLI's EventBridge subcommands the README uses, and their flags (the parameters
 * `aws events <command> --generate-cli-skeleton` lists).
 */
const AWS_GLOBAL = ["--endpoint-url", "--region", "--profile", "--output", "--no-cli-pager"];
const AWS_COMMANDS: Record<string, readonly string[]> = {
  "events put-rule": [
    "--name",
    "--event-bus-name",
    "--event-pattern",
    "--schedule-expression",
    "--state",
    "--description",
    "--role-arn",
    "--tags",
  ],
  "events put-targets": ["--rule", "--event-bus-name", "--targets"],
  "events start-replay": [
    "--replay-name",
    "--description",
    "--event-source-arn",
    "--event-start-time",
    "--event-end-time",
    "--destination",
  ],
};

/** curl's options the README uses (curl --help all). */
const CURL_FLAGS = new Set([
  "-s",
  "-sN",
  "-N",
  "-X",
  "-H",
  "-d",
  "--get",
  "--data-urlencode",
  "--aws-sigv4",
  "--user",
]);
const CURL_TAKES_VALUE = new Set(["-X", "-H", "-d", "--data-urlencode", "--aws-sigv4", "--user"]);

/** What the root package.json runs for `npm <script>`. */
async function npmScripts(): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  return manifest.scripts;
}

/** Commands no test can run, and why; each is checked instead. */
const NOT_RUN: Record<string, string> = {
  "npm install": "installs into the checkout this test runs from",
  "npm test": "runs the suite this test is part of",
  "npm start":
    "serves on the README's fixed port and .toolbus; every block here runs against npm start's entry point on a free port and a state folder of its own",
};

function flagsOf(words: readonly string[], takesValue: (flag: string) => boolean) {
  const flags: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word.startsWith("-")) {
      const [flag] = word.split("=");
      flags.push(flag as string);
      if (!word.includes("=") && takesValue(flag as string)) i++;
    } else positionals.push(word);
  }
  return { flags, positionals };
}

/** What is wrong with a command that is checked instead of run ([] when nothing is). */
async function checkCommand(words: readonly string[], openapi: OpenApi): Promise<string[]> {
  const [name, ...rest] = program(words);
  if (name === "npx" && rest[0] === "sst") {
    const sub = rest[1] === "secrets" ? `secrets ${rest[2]}` : (rest[1] ?? "");
    const spec = SST_COMMANDS[sub];
    if (!spec) return [`sst ${sub} is not an SST v2 command the test knows`];
    const args = rest.slice(sub.includes(" ") ? 3 : 2);
    const { flags, positionals } = flagsOf(args, (flag) => !SST_BOOLEAN.includes(flag));
    const [min, max] = spec.args;
    return [
      ...flags
        .filter((f) => !spec.flags.includes(f) && !SST_GLOBAL.includes(f))
        .map((f) => `sst ${sub}: unknown flag ${f}`),
      ...(positionals.length < min || positionals.length > max
        ? [`sst ${sub} takes ${min}-${max} argument(s), got ${positionals.length}`]
        : []),
    ];
  }
  if (name === "aws") {
    const sub = `${rest[0]} ${rest[1]}`;
    const known = AWS_COMMANDS[sub];
    if (!known) return [`aws ${sub} is not an AWS CLI command the test knows`];
    const { flags } = flagsOf(rest.slice(2), () => true);
    return flags
      .filter((f) => !known.includes(f) && !AWS_GLOBAL.includes(f))
      .map((f) => `aws ${sub}: unknown flag ${f}`);
  }
  if (name === "npm") {
    const scripts = await npmScripts();
    const sub = rest[0] ?? "";
    if (sub === "install" && rest.length === 1) return [];
    if (sub === "run") return rest[1] && scripts[rest[1]] ? [] : [`no npm script ${rest[1]}`];
    return scripts[sub] ? [] : [`npm ${sub}: no such script in package.json`];
  }
  if (name === "curl") return checkCurl(rest, openapi);
  const cli =
    name === "toolbus" ? rest : name === "npx" && rest[1] === "toolbus" ? rest.slice(2) : undefined;
  if (cli) {
    try {
      parseCommandLine(cli);
      return [];
    } catch (error) {
      return [`toolbus ${cli.join(" ")}: ${(error as Error).message}`];
    }
  }
  return [`${name}: the test does not know how to check this command`];
}

interface OpenApi {
  paths: Record<string, Record<string, unknown>>;
}

function checkCurl(args: readonly string[], openapi: OpenApi): string[] {
  const problems: string[] = [];
  let method = "GET";
  let url: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg.startsWith("-")) {
      if (!CURL_FLAGS.has(arg)) problems.push(`curl: ${arg} is not an option the test knows`);
      const value = CURL_TAKES_VALUE.has(arg) ? (args[++i] as string) : undefined;
      if (arg === "-X") method = value ?? "";
      if (arg === "-d" && value !== undefined) {
        if (method === "GET") method = "POST";
        try {
          JSON.parse(value);
        } catch (error) {
          problems.push(`curl -d: not JSON: ${(error as Error).message}`);
        }
      }
    } else url = arg;
  }
  const path = url ? new URL(url.startsWith("http") ? url : `http://${url}`).pathname : "";
  const route = Object.entries(openapi.paths).find(([template]) =>
    new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path),
  );
  if (!route) problems.push(`curl: ${path} is not a route of the API`);
  else if (!(method.toLowerCase() in route[1])) problems.push(`curl: no ${method} ${route[0]}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// What to do with each block

type Plan =
  | { kind: "run-shell" }
  | { kind: "run-ts" }
  | { kind: "render-agent" }
  | { kind: "stage-config" }
  | { kind: "check-commands"; reason: string }
  | { kind: "check-fragment" }
  | { kind: "check-synopsis" }
  | { kind: "generated" }
  | { kind: "text" }
  | { kind: "unknown"; reason: string };

const SHELL = new Set(["sh", "bash", "shell"]);
const TYPESCRIPT = new Set(["ts", "typescript", "js", "javascript"]);

function planFor(block: Block): Plan {
  try {
    return planOf(block);
  } catch (error) {
    return { kind: "unknown", reason: (error as Error).message };
  }
}

function planOf(block: Block): Plan {
  if (block.generated) return { kind: "generated" };
  if (block.mark === "fragment") return { kind: "check-fragment" };
  if (block.mark === "output") return { kind: "text" };
  if (block.mark === "third-party") return { kind: "check-commands", reason: "third-party" };
  if (SHELL.has(block.lang)) {
    const commands = shellCommands(block.text).map((command) => program(command.words));
    if (commands.some((words) => (words[0] === "npx" && words[1] === "sst") || isAwsCloud(words))) {
      return { kind: "check-commands", reason: "needs AWS" };
    }
    if (commands.some((words) => words[0] === "aws") && !AWS_CLI) {
      return { kind: "check-commands", reason: "the AWS CLI is not installed here" };
    }
    if (commands.length > 0 && commands.every(([name, sub]) => `${name} ${sub}` in NOT_RUN)) {
      return { kind: "check-commands", reason: "cannot run inside a test" };
    }
    return { kind: "run-shell" };
  }
  if (TYPESCRIPT.has(block.lang)) return { kind: "run-ts" };
  if (block.lang === "json") {
    const value = JSON.parse(block.text) as Record<string, unknown>;
    if ("agent" in value || ("name" in value && "prompt" in value)) return { kind: "render-agent" };
    if ("roles" in value || "modes" in value || "stage" in value) return { kind: "stage-config" };
    throw new Error(
      "a JSON block the test does not know: an agent, a render request or a stage configuration runs; mark anything else output or fragment",
    );
  }
  if (
    block.lang === "" &&
    block.text
      .trim()
      .split("\n")
      .every((l) => l.startsWith("toolbus "))
  ) {
    return { kind: "check-synopsis" };
  }
  return { kind: "text" };
}

/** The aws CLI against AWS itself (not the local bus, which it reaches with --endpoint-url). */
function isAwsCloud(words: readonly string[]): boolean {
  return words[0] === "aws" && !words.includes("--endpoint-url");
}

/** The local bus block runs where the AWS CLI is installed, and is checked elsewhere. */
const AWS_CLI = spawnSync("bash", ["-c", "command -v aws"], { encoding: "utf8" }).stdout.trim();

// ---------------------------------------------------------------------------------------------
// The world the blocks run in

const blocks = READMES.flatMap((file) =>
  extractBlocks(file, readFileSync(join(REPO, file), "utf8")),
);
const plans = new Map(blocks.map((block) => [block, planFor(block)]));

let scratch: string;
/**
 * The stand-in checkout: node_modules and packages are this repository's (the client's a copy),
 * .toolbus is its own.
 */
let checkout: string;
/** "Your project" of the client README. */
let project: string;
let shims: string;
let server: StartedToolbus | undefined;
let api: string;
let adminKey: string;
let openapi: OpenApi;

/**
 * Each page's blocks run one after another, in order; the pages side by side. A page's blocks
 * may build on each other (a run's policy, then calls in that run); two pages must not both
 * depend on one run's state (its policy, a call id).
 */
const results = new Map<Block, Promise<void>>();

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "toolbus-readme-"));
  checkout = join(scratch, "toolbus");
  project = join(scratch, "my-project");
  shims = join(scratch, "bin");
  await Promise.all([
    mkdir(join(checkout, "packages"), { recursive: true }),
    mkdir(project),
    mkdir(shims),
  ]);
  await Promise.all([
    symlink(join(REPO, "node_modules"), join(checkout, "node_modules")),
    ...WORKSPACES.filter((dir) => dir !== "packages/client").map((dir) =>
      symlink(join(REPO, dir), join(checkout, dir)),
    ),
    // The client's own copy: packing it builds dist/ (and writes its generated types) there,
    // never in this repository, where another test may be packing at the same time.
    cp(join(REPO, "packages/client"), join(checkout, "packages/client"), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    }),
    copyFile(join(REPO, "tsconfig.json"), join(checkout, "tsconfig.json")),
    writeFile(
      join(checkout, "package.json"),
      JSON.stringify({ name: "toolbus-checkout", private: true, type: "module" }),
    ),
    writeFile(
      join(project, "package.json"),
      JSON.stringify({ name: "my-project", private: true, type: "module" }),
    ),
    writeShims(),
  ]);

  // The stage runs with what the README tells a reader to configure: its approvals fragment
  // (a fragment that is not JSON is left out here, and fails as its own block).
  const fragments = blocks
    .filter((b) => plans.get(b)?.kind === "check-fragment" && b.lang === "json")
    .flatMap((b) => {
      try {
        return [JSON.parse(`{${b.text}}`) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const config = Object.assign({}, ...fragments.filter((f) => "approvals" in f));
  server = await spawnToolbus(
    ["--memory", "--port", "0", "--state-dir", join(checkout, ".toolbus")],
    {
      env: {
        TOOLBUS_CONFIG: JSON.stringify(config),
        TOOLBUS_CONFIG_FILE: undefined,
        TOOLBUS_ADMIN_KEY: undefined,
        TOOLBUS_PORT: undefined,
      },
    },
  );
  const local = JSON.parse(await readFile(join(checkout, ".toolbus/local.json"), "utf8")) as {
    api: string;
  };
  api = local.api;
  adminKey = (await readFile(join(checkout, ".toolbus/admin-key"), "utf8")).trim();
  openapi = (await (await fetch(`${api}/openapi.json`)).json()) as OpenApi;

  for (const file of READMES) {
    let previous: Promise<void> = Promise.resolve();
    for (const block of blocks.filter((b) => b.file === file)) {
      // A block runs after the one before it, whatever became of that one.
      const result = previous.catch(() => undefined).then(() => handle(block));
      result.catch(() => undefined);
      results.set(block, result);
      previous = result;
    }
  }
}, 120_000);

afterAll(async () => {
  if (server) {
    const { child, exited } = server;
    child.kill("SIGTERM");
    const late = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(late);
  }
  // README_EXAMPLES_KEEP=1 keeps every block's script, program and output folder to look at.
  if (process.env.README_EXAMPLES_KEEP) console.log(`Kept ${scratch}`);
  else if (scratch) await rm(scratch, { recursive: true, force: true });
}, 30_000);

/** curl and npx as the blocks call them: statuses recorded, followers interrupted. */
async function writeShims(): Promise<void> {
  const real = (name: string) => {
    const found = spawnSync("bash", ["-c", `command -v ${name}`], {
      encoding: "utf8",
      env: { PATH: readerPath() },
    });
    const path = found.stdout.trim();
    if (!path) throw new Error(`${name} is not installed`);
    return path;
  };
  // GNU timeout (gtimeout where coreutils come from Homebrew) sends Ctrl-C's SIGINT.
  const timeout = ["timeout", "gtimeout"].find((name) =>
    spawnSync("bash", ["-c", `command -v ${name}`], { env: { PATH: readerPath() } })
      .stdout.toString()
      .trim(),
  );
  if (!timeout) throw new Error("GNU timeout (coreutils) is needed to interrupt followers");
  const follow = `${real(timeout)} --preserve-status -s INT ${FOLLOW_SECONDS}`;
  await writeFile(
    join(shims, "curl"),
    `#!/usr/bin/env bash
headers=$(mktemp)
follows=0
for arg in "$@"; do
  case "$arg" in --no-buffer|*text/event-stream*) follows=1 ;; --*) ;; -*N*) follows=1 ;; esac
done
if [ $follows = 1 ]; then ${follow} ${real("curl")} -D "$headers" "$@"; code=$?; [ $code = 130 ] && code=0
else ${real("curl")} -D "$headers" "$@"; code=$?; fi
status=$(awk 'NR==1 {print $2}' "$headers")
rm -f "$headers"
echo "\${status:-none}" >> "$EXAMPLE_CURL_LOG"
exit $code
`,
    { mode: 0o755 },
  );
  await writeFile(
    join(shims, "npx"),
    `#!/usr/bin/env bash
follows=0
for arg in "$@"; do case "$arg" in listen|--follow) follows=1 ;; esac; done
if [ $follows = 1 ]; then ${follow} ${real("npx")} "$@"; code=$?; [ $code = 130 ] && code=0; exit $code; fi
exec ${real("npx")} "$@"
`,
    { mode: 0o755 },
  );
}

/** The block's text as it runs here: the README's address and checkout replaced by ours. */
function localized(text: string): string {
  return text
    .replaceAll(/(?:localhost|127\.0\.0\.1):8787/g, new URL(api).host)
    .replaceAll("/path/to/toolbus", checkout);
}

/** A reader's PATH: without node_modules/.bin, which npx and npm put this repository's on. */
function readerPath(): string {
  return (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => !dir.includes("node_modules/.bin"))
    .join(":");
}

function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    // Nothing of this machine's own Toolbus or AWS settings reaches an example, nor what npm
    // tells the scripts it runs (this test may run under `npm test`).
    if (/^(TOOLBUS_|AWS_|KEY$|ADMIN_KEY$|MEMBER_KEY$|BUS$|npm_|INIT_CWD$)/i.test(name)) continue;
    env[name] = value;
  }
  // npm's cache first (the registry only for what it lacks), as the repository's other
  // packing test installs; no audit or funding requests.
  Object.assign(env, {
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
  });
  return { ...env, PATH: `${shims}:${readerPath()}`, ...extra };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      stderr += `\n(still running after ${options.timeoutMs / 1000} s: stopped)`;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, options.timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

function failure(block: Block, what: string, ran?: Ran): Error {
  const tail = (text: string) => text.trimEnd().split("\n").slice(-25).join("\n");
  const output = ran ? `\n--- stdout:\n${tail(ran.stdout)}\n--- stderr:\n${tail(ran.stderr)}` : "";
  return new Error(`${where(block)} (\`\`\`${block.lang}): ${what}${output}`);
}

/** The client README's blocks run in "your project"; every other one in the checkout. */
const dirFor = (block: Block) => (block.file.startsWith("packages/client/") ? project : checkout);
const safeName = (block: Block) => `${block.file.replace(/[^A-Za-z0-9]+/g, "-")}-${block.line}`;

async function handle(block: Block, plan = plans.get(block) as Plan): Promise<void> {
  switch (plan.kind) {
    case "run-shell":
      return runShell(block);
    case "run-ts":
      return runTypeScript(block);
    case "render-agent":
      return renderAgent(block);
    case "stage-config":
      return checkStageConfig(block, block.text);
    case "check-commands": {
      const problems: string[] = [];
      for (const command of shellCommands(block.text)) {
        problems.push(...(await checkCommand(command.words, openapi)));
      }
      if (problems.length > 0) throw failure(block, problems.join("; "));
      return;
    }
    case "check-fragment":
      return checkFragment(block);
    case "check-synopsis":
      return checkSynopsis(block);
    case "generated":
      return checkGenerated(block);
    case "unknown":
      throw failure(block, plan.reason);
    case "text":
      if (block.lang === "json") {
        try {
          JSON.parse(block.text);
        } catch (error) {
          throw failure(block, `not JSON: ${(error as Error).message}`);
        }
      }
      return;
  }
}

async function runShell(block: Block): Promise<void> {
  const script = join(scratch, `${safeName(block)}.sh`);
  const log = join(scratch, `${safeName(block)}.curl`);
  await writeFile(script, localized(block.text));
  await writeFile(log, "");
  const ran = await run("bash", ["-euo", "pipefail", script], {
    cwd: dirFor(block),
    env: environment({ KEY: adminKey, EXAMPLE_CURL_LOG: log }),
    timeoutMs: 90_000,
  });
  await writeFile(`${script}.out`, `${ran.stdout}\n--- stderr:\n${ran.stderr}`);
  if (ran.code !== 0) throw failure(block, `exited with ${ran.code}`, ran);
  const expected = shellCommands(block.text)
    .filter((command) => program(command.words)[0] === "curl")
    .map((command) => ({
      command: command.source,
      status: /^#\s*->\s*(\d{3})\b/.exec(command.comment ?? "")?.[1],
    }));
  const statuses = (await readFile(log, "utf8")).split("\n").filter(Boolean);
  if (statuses.length !== expected.length) {
    throw failure(block, `ran curl ${statuses.length} times for ${expected.length} commands`, ran);
  }
  expected.forEach(({ command, status }, index) => {
    const got = statuses[index] ?? "none";
    const ok = status ? got === status : /^2\d\d$/.test(got);
    if (!ok) {
      throw failure(
        block,
        `\`${command.slice(0, 100)}\` answered ${got}, not ${status ?? "2xx"}`,
        ran,
      );
    }
  });
}

/** Stand-ins for what a block uses but does not make: see the comment at the top. */
const GIVEN: Record<string, { imports?: string; code: string }> = {
  toolbus: {
    imports: 'import { createToolbusClient } from "@toolbus/client";',
    code: `export const toolbus = createToolbusClient({
  baseUrl: process.env.TOOLBUS_ENDPOINT ?? "",
  apiKey: process.env.TOOLBUS_API_KEY ?? "",
});`,
  },
  signal: { code: "export const signal = AbortSignal.timeout(3000);" },
  prompt: { code: 'export const prompt = "How readable is: The cat sat on the mat.";' },
  messages: {
    // At the end, the tool messages the block added must hold results that succeeded.
    code: `export const messages: { role: string; content: unknown }[] = [
  { role: "user", content: "How readable is: The cat sat on the mat." },
];
process.once("beforeExit", () => {
  const results = messages.filter((message) => message.role === "tool");
  if (results.length === 0 || !results.every((m) => String(m.content).includes("succeeded"))) {
    console.error(\`a tool message is not a success: \${JSON.stringify(results)}\`);
    process.exitCode = 1;
  }
});`,
  },
  model: {
    imports: 'import { MockLanguageModelV3 } from "ai/test";',
    // Calls readability_analyzer, then answers once the result came back from Toolbus, and
    // only if the call succeeded there.
    code: `const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
export const model = new MockLanguageModelV3({
  async doGenerate(options: { prompt: unknown[] }) {
    const prompt = JSON.stringify(options.prompt);
    if (!prompt.includes("tool-result")) {
      const input = JSON.stringify({ text: "The cat sat on the mat." });
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "readability_analyzer", input }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    }
    if (!prompt.includes("succeeded")) {
      throw new Error(\`the tool call through Toolbus did not succeed: \${prompt}\`);
    }
    return { content: [{ type: "text", text: "Very easy." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
  },
});`,
  },
  openai: {
    code: `export const openai = {
  chat: {
    completions: {
      async create(request: { tools: { function: { name: string } }[] }) {
        if (!request.tools.some((tool) => tool.function.name === "readability_analyzer")) {
          throw new Error("readability_analyzer was not offered");
        }
        const call = { id: "call-1", type: "function", function: { name: "readability_analyzer", arguments: JSON.stringify({ text: "The cat sat on the mat." }) } };
        return { choices: [{ message: { role: "assistant", content: null, tool_calls: [call] } }] };
      },
    },
  },
};`,
  },
  chatModel: {
    code: `export const chatModel = {
  bindTools(tools: { name: string }[]) {
    if (!tools.some((tool) => tool.name === "readability_analyzer")) {
      throw new Error("readability_analyzer was not offered");
    }
    return { tools };
  },
};`,
  },
};

/** Names of GIVEN the code uses without making them itself. */
function givenNames(code: string): string[] {
  const withoutComments = code.replace(/\/\/.*$/gm, "");
  return Object.keys(GIVEN).filter((name) => {
    if (!new RegExp(`\\b${name}\\b`).test(withoutComments)) return false;
    const made = new RegExp(
      `(?:const|let|var|function|class)\\s+(?:${name}\\b|\\{[^}]*\\b${name}\\b[^}]*\\})|import[^;]*\\b${name}\\b[^;]*from`,
    );
    return !made.test(withoutComments);
  });
}

let projectPeers: Promise<void> | undefined;

/**
 * The adapters' libraries in "your project", as the README says to install the one you use:
 * linked from this repository (the versions it tests with) rather than fetched.
 */
function linkPeers(): Promise<void> {
  projectPeers ??= (async () => {
    await mkdir(join(project, "node_modules/@langchain"), { recursive: true });
    for (const name of ["ai", "openai", "@langchain/core"]) {
      await symlink(join(REPO, "node_modules", name), join(project, "node_modules", name)).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code !== "EEXIST") throw error;
        },
      );
    }
  })();
  return projectPeers;
}

async function runTypeScript(block: Block): Promise<void> {
  const dir = dirFor(block);
  if (dir === project) await linkPeers();
  const name = `readme-${safeName(block)}`;
  const code = localized(block.text);
  const given = givenNames(code);
  if (given.length > 0) {
    const stands = given.map((n) => GIVEN[n] as { imports?: string; code: string });
    await writeFile(
      join(dir, `${name}.given.ts`),
      [...new Set(stands.flatMap((s) => (s.imports ? [s.imports] : [])))]
        .concat(stands.map((s) => s.code))
        .join("\n"),
    );
  }
  const header =
    given.length > 0 ? `import { ${given.join(", ")} } from "./${name}.given.ts";\n` : "";
  await writeFile(join(dir, `${name}.ts`), `${header}${code}`);
  const ran = await run(process.execPath, [TSX, `${name}.ts`], {
    cwd: dir,
    env: environment({
      TOOLBUS_ENDPOINT: api,
      TOOLBUS_API_KEY: adminKey,
      NODE_NO_WARNINGS: "1",
      // In the checkout, the workspace packages (the stand-ins' client among them) load from
      // source, as the type checker reads them: a fresh clone has no client build.
      ...(dir === checkout ? { NODE_OPTIONS: "--conditions=@toolbus/source" } : {}),
    }),
    timeoutMs: 60_000,
  });
  await writeFile(join(dir, `${name}.out`), `${ran.stdout}\n--- stderr:\n${ran.stderr}`);
  if (ran.code !== 0) throw failure(block, `exited with ${ran.code}`, ran);
}

async function renderAgent(block: Block): Promise<void> {
  const file = join(scratch, `${safeName(block)}.json`);
  await writeFile(file, block.text);
  const definition = JSON.parse(block.text) as { harness?: string };
  const argv = ["render-agent", file, ...(definition.harness ? [] : ["--harness", "all"])];
  const ran = await runToolbusCli(api, argv, adminKey);
  if (ran.code !== 0)
    throw failure(block, `toolbus ${argv.join(" ")} exited with ${ran.code}`, ran);
}

function checkStageConfig(block: Block, text: string): void {
  try {
    const config = parseStageConfig(JSON.parse(text));
    checkToolSettings(config, new Map(builtinTools.map((tool) => [tool.spec.id, tool])));
  } catch (error) {
    throw failure(block, (error as Error).message);
  }
}

function checkFragment(block: Block): void {
  let fragment: Record<string, unknown>;
  try {
    fragment = JSON.parse(block.lang === "json" ? `{${block.text}}` : "{}");
  } catch (error) {
    throw failure(block, `not JSON inside { }: ${(error as Error).message}`);
  }
  if ("api" in fragment) {
    // A stack configuration's part: dev's file with it in place.
    try {
      stackConfigFor("dev", { raw: { ...dev, ...fragment } });
    } catch (error) {
      throw failure(block, (error as Error).message);
    }
    return;
  }
  checkStageConfig(block, JSON.stringify(fragment));
}

function checkSynopsis(block: Block): void {
  const usages = Object.values(COMMANDS).map((spec) => `toolbus ${spec.usage}`);
  const lines = block.text.trim().split("\n");
  const unknown = lines.filter((line) => !usages.includes(line));
  const missing = usages.filter((usage) => !lines.includes(usage));
  if (unknown.length > 0 || missing.length > 0) {
    throw failure(
      block,
      `the synopsis is not the CLI's (toolbus --help): ${[
        ...unknown.map((line) => `not a usage: ${line}`),
        ...missing.map((usage) => `missing: ${usage}`),
      ].join("; ")}`,
    );
  }
}

async function checkGenerated(block: Block): Promise<void> {
  const readme = await readFile(join(REPO, block.file), "utf8");
  if (currentHarnessSection(readme) !== harnessReadmeSection()) {
    throw failure(block, "the harness section is not what scripts/harness-table.ts writes");
  }
  try {
    if (block.lang === "json") JSON.parse(block.text);
    else if (block.lang === "yaml") parseYaml(block.text);
  } catch (error) {
    throw failure(block, (error as Error).message);
  }
}

// ---------------------------------------------------------------------------------------------

describe("the READMEs' examples", { timeout: 120_000 }, () => {
  it("finds the blocks, and knows what to do with each", () => {
    const counts: Record<string, number> = {};
    for (const plan of plans.values()) counts[plan.kind] = (counts[plan.kind] ?? 0) + 1;
    const marks = blocks.filter((block) => block.mark).map((b) => `${where(b)} ${b.mark}`);
    console.log(
      `${blocks.length} blocks: ${JSON.stringify(counts)}; marked: ${marks.join(", ") || "none"}`,
    );
    expect(blocks.length).toBeGreaterThan(20);
    // Marks are for the few blocks nothing can run; a README that marks everything tests nothing.
    expect(marks.length).toBeLessThanOrEqual(Math.ceil(blocks.length / 4));
    // Each file's blocks all have a plan (planFor throws for a block it does not know).
    expect(plans.size).toBe(blocks.length);
  });

  it("fails a broken example naming its file and line", { timeout: 300_000 }, async () => {
    // After the READMEs' own blocks: the client's project must be installed first.
    await Promise.allSettled(results.values());
    const broken = (file: string, markdown: string) => {
      const found = extractBlocks(file, markdown);
      return Promise.all(
        found.map((block) =>
          handle(block, planFor(block)).then(
            () => `${where(block)} passed`,
            (error: Error) => error.message,
          ),
        ),
      );
    };
    const messages = await broken(
      "BROKEN.md",
      [
        "```sh",
        'curl -s localhost:8787/v1/nope -H "authorization: Bearer $KEY"',
        "```",
        "```sh",
        "echo $NOT_SET_ANYWHERE",
        "```",
        "```sh",
        "npx sst deplyo --stage prod",
        "```",
        "```json",
        '{ "name": "a", "description": "b", "prompt": "c", "mode": "research" }',
        "```",
        "```json",
        '{ "unknown": true }',
        "```",
        "<!-- example: fragment -->",
        "```json",
        '"approvals": { "rules": [{ "tools": ["github_api"], "roles": ["owner"] }] }',
        "```",
      ].join("\n"),
    );
    expect(messages).toEqual([
      expect.stringMatching(/^BROKEN\.md:1 \(```sh\): `curl -s .*` answered 404, not 2xx/),
      expect.stringMatching(
        /^BROKEN\.md:4 \(```sh\): exited with 1[\s\S]*NOT_SET_ANYWHERE: unbound/,
      ),
      expect.stringMatching(/^BROKEN\.md:7 \(```sh\): sst deplyo is not an SST v2 command/),
      expect.stringMatching(/^BROKEN\.md:10 \(```json\): toolbus render-agent [\s\S]*Unknown mode/),
      expect.stringMatching(/^BROKEN\.md:13 \(```json\): a JSON block the test does not know/),
      expect.stringMatching(/^BROKEN\.md:17 \(```json\): [\s\S]*approvals\.rules\.0\.roles/),
    ]);
    // The adapter example as it was: a mode the local stage does not have.
    const [adapter] = await broken(
      "packages/client/BROKEN.md",
      [
        "```ts",
        'import { toolbusTools } from "@toolbus/client/ai";',
        'await toolbusTools(toolbus, { runId: "run-42", mode: "research" });',
        "```",
      ].join("\n"),
    );
    expect(adapter).toMatch(
      /^packages\/client\/BROKEN\.md:1 \(```ts\): exited with 1[\s\S]*Unknown mode/,
    );
    expect(() => extractBlocks("X.md", "<!-- example: outptu -->\n```sh\nls\n```\n")).toThrow(
      'X.md:1: unknown mark "outptu"',
    );
  });

  for (const block of blocks) {
    const plan = plans.get(block) as Plan;
    const label = `${where(block)} \`\`\`${block.lang || "text"}: ${plan.kind}${"reason" in plan ? ` (${plan.reason})` : ""}`;
    it(label, async () => {
      const result = results.get(block);
      if (!result) throw failure(block, "was not run: the setup failed");
      await result;
    });
  }
});
