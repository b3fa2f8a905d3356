import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startHeaderProxy } from "./header-proxy";

/** The protocol revisions the suite can hold a server to. */
export type ProtocolRevision = "2025-11-25" | "2026-07-28";

export interface ConformanceOptions {
  /** The server's MCP endpoint. */
  url: string;
  revision: ProtocolRevision;
  /**
   * Scenarios to run, each at `revision`'s wire. Without them, exactly the scenarios the
   * revision requires (the suite's frozen requirement set), scored ones and the rest.
   */
  scenarios?: readonly string[];
  /** Headers every request carries, such as `authorization`; the suite has no option for them. */
  headers?: Record<string, string>;
  /** For the whole run; the suite's process is killed when it is over. */
  timeoutMs?: number;
  /**
   * Runs the named scenarios even where the suite says they do not apply at `revision`: an
   * extension's (the Tasks extension's `tasks-*`) apply at no revision of their own, and are
   * skipped unless forced.
   */
  force?: boolean;
}

/** One check's id and what the suite said about it. */
export interface CheckNote {
  id: string;
  message: string;
}

export interface ScenarioResult {
  scenario: string;
  /**
   * As the suite counts it: passed when none of its checks failed (warnings allowed);
   * skipped when the scenario does not apply at the revision (single-scenario runs only).
   */
  outcome: "passed" | "failed" | "skipped";
  /** Whether the revision's requirement set scores it (others are run for visibility only). */
  scored: boolean;
  /** How many checks succeeded. */
  passed: number;
  failures: CheckNote[];
  warnings: CheckNote[];
}

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  description?: string;
  errorMessage?: string;
  details?: { message?: unknown };
}

const SUITE_DIR = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/conformance/", import.meta.url),
);
// The suite's own floor; this project's scripts run Node 24 (see scripts/require-node.mjs).
const SUITE_MINIMUM_NODE = 22;

/**
 * Runs the official MCP conformance suite (`conformance server`) against `url` and returns
 * one result per scenario, read from the checks.json files the suite writes, not from its
 * console output. With `headers`, the suite talks to a loopback proxy that adds them.
 */
export async function runConformance(options: ConformanceOptions): Promise<ScenarioResult[]> {
  requireSuiteNode();
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const scored = new Set(await requiredScenarios(options.revision));
  const proxy = options.headers ? await startHeaderProxy(options.url, options.headers) : undefined;
  const outputDir = await mkdtemp(join(tmpdir(), "mcp-conformance-"));
  try {
    const url = proxy?.url ?? options.url;
    if (!options.scenarios) {
      const output = await runSuite(
        ["server", "--url", url, "--requirements", options.revision, "--output-dir", outputDir],
        deadline,
      );
      return await readResults(outputDir, output, scored);
    }
    const results: ScenarioResult[] = [];
    // One process per scenario, in order: the suite takes one --scenario at a time, and
    // scenarios run against one server must not overlap (some count its notifications).
    for (const scenario of options.scenarios) {
      const dir = join(outputDir, String(results.length));
      const output = await runSuite(
        [
          "server",
          "--url",
          url,
          "--scenario",
          scenario,
          "--spec-version",
          options.revision,
          ...(options.force ? ["--force"] : []),
          "--output-dir",
          dir,
        ],
        deadline,
      );
      results.push(await readScenario(dir, scenario, output, scored.has(scenario)));
    }
    return results;
  } finally {
    await proxy?.close();
    await rm(outputDir, { recursive: true, force: true });
  }
}

/**
 * The server scenarios `revision` requires and scores, from the suite's frozen requirement
 * set (`conformance list --requirements`), in the suite's order.
 */
export async function requiredScenarios(revision: ProtocolRevision): Promise<string[]> {
  requireSuiteNode();
  const output = await runSuite(["list", "--requirements", revision], Date.now() + 30_000);
  // The listing: a "Server scenarios ..." heading, then "  - <name>" lines up to a blank line.
  const lines = output.split("\n");
  const heading = lines.findIndex((line) => line.startsWith("Server scenarios"));
  if (heading === -1) throw new Error(`Unexpected requirement listing:\n${output}`);
  const names: string[] = [];
  for (const line of lines.slice(heading + 1)) {
    const name = /^\s+- (\S+)$/.exec(line)?.[1];
    if (!name) break;
    names.push(name);
  }
  return names;
}

/** The failed scenarios, one line each with their failed checks, for an assertion message. */
export function describeFailures(results: readonly ScenarioResult[]): string {
  return results
    .filter((result) => result.outcome === "failed")
    .map(
      (result) =>
        `${result.scenario}: ${result.failures.map((f) => `${f.id} (${f.message})`).join("; ")}`,
    )
    .join("\n");
}

function requireSuiteNode(): void {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < SUITE_MINIMUM_NODE) {
    throw new Error(
      `The MCP conformance suite needs Node ${SUITE_MINIMUM_NODE} or newer; this is ${process.version}. Run the tests through npm (npm test), which puts the project's Node first on PATH.`,
    );
  }
}

async function suiteEntry(): Promise<string> {
  const manifest = JSON.parse(await readFile(join(SUITE_DIR, "package.json"), "utf8")) as {
    bin: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin.conformance;
  if (!bin) throw new Error("The conformance package names no `conformance` command");
  return join(SUITE_DIR, bin);
}

/** The suite's CLI under this process's Node; resolves with what it printed. */
async function runSuite(args: readonly string[], deadline: number): Promise<string> {
  const child = spawn(process.execPath, [await suiteEntry(), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    // No colours: the output is parsed (the listing) or kept to explain a failure.
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const timer = setTimeout(() => child.kill("SIGKILL"), Math.max(0, deadline - Date.now()));
  try {
    // A non-zero exit only means some check failed; the checks themselves are read from disk.
    const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (_code, exitSignal) => resolve(exitSignal));
    });
    if (signal) throw new Error(`The conformance suite was stopped (${signal}):\n${output}`);
    return output;
  } finally {
    clearTimeout(timer);
  }
}

// The suite names each result directory `server-<scenario>-<ISO time with : and . as ->`.
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

async function readResults(
  outputDir: string,
  output: string,
  scored: ReadonlySet<string>,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const entry of (await readdir(outputDir)).sort()) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    if (!scenario) continue;
    results.push(await readChecks(join(outputDir, entry), scenario, output, scored.has(scenario)));
  }
  if (results.length === 0) throw new Error(`The conformance suite ran no scenario:\n${output}`);
  return results;
}

async function readScenario(
  dir: string,
  scenario: string,
  output: string,
  scored: boolean,
): Promise<ScenarioResult> {
  const entry = (await readdir(dir).catch(() => [])).find((name) => RESULT_DIR.test(name));
  if (!entry) throw new Error(`The conformance suite did not run ${scenario}:\n${output}`);
  return readChecks(join(dir, entry), scenario, output, scored);
}

async function readChecks(
  dir: string,
  scenario: string,
  output: string,
  scored: boolean,
): Promise<ScenarioResult> {
  const raw = await readFile(join(dir, "checks.json"), "utf8").catch(() => undefined);
  if (raw === undefined) {
    // The suite makes the directory before deciding to skip, and writes no checks then;
    // a scenario that threw leaves no checks either, and counts as failed, as the suite
    // counts it.
    const skipped = output.includes(`SKIPPED: scenario '${scenario}'`);
    return {
      scenario,
      outcome: skipped ? "skipped" : "failed",
      scored,
      passed: 0,
      failures: skipped
        ? []
        : [{ id: scenario, message: `no checks were written:\n${output.slice(-2_000)}` }],
      warnings: [],
    };
  }
  const checks = JSON.parse(raw) as Check[];
  const failures = checks.filter((check) => check.status === "FAILURE").map(note);
  return {
    scenario,
    outcome: failures.length === 0 ? "passed" : "failed",
    scored,
    passed: checks.filter((check) => check.status === "SUCCESS").length,
    failures,
    warnings: checks.filter((check) => check.status === "WARNING").map(note),
  };
}

function note(check: Check): CheckNote {
  const detail = typeof check.details?.message === "string" ? check.details.message : undefined;
  return { id: check.id, message: check.errorMessage ?? detail ?? check.description ?? "" };
}
