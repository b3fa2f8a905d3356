import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMMANDS, runCli } from "@toolbus/client/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The command line's own rules, run in this process: every case here fails before a request
// is made (cli.test.ts runs the real launcher against a running API).

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "toolbus-cli-usage-"));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function cli(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  let stdout = "";
  let stderr = "";
  let requests = 0;
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: (async function* () {})(),
    env: options.env ?? {},
    cwd: options.cwd ?? scratch,
    fetch: async () => {
      requests++;
      throw new Error("no request expected");
    },
  });
  return { code, stdout, stderr, requests };
}

const CONNECTED = ["--endpoint", "http://127.0.0.1:9", "--key", "k"];

describe("the command line's usage errors", () => {
  it.each([
    [[], "No command given."],
    [["frobnicate"], "Unknown command: frobnicate."],
    [["tools"], "toolbus tools needs a command."],
    [["tools", "enable"], "Missing <id>."],
    [["tools", "disable", "Web-Search"], "<id>: snake_case"],
    [["toolsets", "show"], "Missing <name>."],
    [["capabilities"], "Try: toolbus capabilities list, toolbus capabilities refresh"],
    [["capabilities", "list", "extra"], "Unexpected argument: extra."],
    [["tools", "lst"], "Unknown command: tools lst."],
    [["keys", "delete", "k1"], "Unknown command: keys delete."],
    [["tools", "list", "--bogus"], "Unknown option '--bogus'."],
    [["tools", "list", "--follow"], "--follow is not an option of toolbus tools list."],
    [
      ["tools", "list", "--available", "--unavailable"],
      "--available and --unavailable exclude each other",
    ],
    [
      ["tools", "list", "--category", "fun"],
      "--category is one of research, reference, enhance, publish, utility",
    ],
    [["tools", "show"], "Missing <id>."],
    [["tools", "show", "a_tool", "extra"], "Unexpected argument: extra."],
    [["tools", "show", "Not-A-Tool"], "<id>: snake_case"],
    [["call", "readability_analyzer"], "--run <runId> is required"],
    [["call", "readability_analyzer", "--run", "bad run"], "--run: 1-128 characters"],
    [["call", "Not-A-Tool", "--run", "r1"], "<tool>: snake_case"],
    [["call", "readability_analyzer", "--run", "r1", "--wait", "99"], "--wait is at most 60"],
    [["call", "readability_analyzer", "--run", "r1", "--wait", "soon"], "--wait must be a number"],
    [
      ["call", "readability_analyzer", "--run", "r1", "--input", "{nope"],
      "--input is not valid JSON",
    ],
    [
      ["call", "readability_analyzer", "--run", "r1", "--input", "{}", "--input-file", "x.json"],
      "give --input or --input-file, not both",
    ],
    [
      ["call", "readability_analyzer", "--run", "r1", "--input-file", "x.json"],
      "x.json does not exist.",
    ],
    [
      ["call", "readability_analyzer", "--run"],
      "Did you forget to specify the option argument for '--run'?",
    ],
    [["calls", "show", "run-1"], "Missing <callId>."],
    [["events"], "Missing <runId>."],
    [["events", "run-1", "--limit", "0"], "--limit is at least 1"],
    [["events", "run-1", "--limit", "2.5"], "--limit must be a whole number"],
    [
      ["render-agent", "agent.json", "--harness", "vim"],
      "--harness is one of claude-code, opencode, copilot, all",
    ],
    [["render-agent", "agent.json", "--harness", "all"], "agent.json does not exist."],
    [
      ["render-agent", "agent.json", "--harness", "all", "--no-toolbus-tools=yes"],
      "Option '--no-toolbus-tools' does not take an argument.",
    ],
    [["runs", "policy"], "Missing <runId>."],
    [
      ["runs", "policy", "run-1"],
      "give at least one limit: --max-calls, --max-calls-per-tool, --max-seconds, --max-cost, --max-repeats",
    ],
    [["runs", "policy", "run-1", "--max-calls", "0"], "--max-calls is at least 1"],
    [["runs", "policy", "run-1", "--max-repeats", "1001"], "--max-repeats is at most 1000"],
    [["runs", "policy", "run-1", "--max-seconds", "2.5"], "--max-seconds must be a whole number"],
    [["runs", "policy", "run-1", "--max-cost", "ten"], "--max-cost must be a whole number"],
    [
      ["runs", "show", "run-1", "--max-calls", "3"],
      "--max-calls is not an option of toolbus runs show.",
    ],
    [["keys", "create", "--name", "x"], "--role is required"],
    [["keys", "create", "--role", "member"], "--name is required"],
    [["keys", "revoke"], "Missing <keyId>."],
    [["keys", "revoke", "../etc"], "<keyId>: not a key id"],
    [["toolsets"], "toolbus toolsets needs a command."],
    [["toolsets", "add", "x.json"], "toolbus toolsets register, toolbus toolsets refresh"],
    [["toolsets", "register"], "Missing <file>."],
    [["toolsets", "register", "acme.json"], "acme.json does not exist."],
    [["toolsets", "register", "-"], "the registration on standard input is not valid JSON"],
    [["toolsets", "refresh"], "Missing <name>."],
    [["toolsets", "refresh", "Weather"], "<name>: snake_case"],
    [["toolsets", "refresh", "weather", "--rename", "search"], "--rename: give <remote>=<id>"],
    [["toolsets", "refresh", "weather", "--rename", "search=Find"], "--rename: snake_case"],
    [
      ["toolsets", "refresh", "weather", "--rename", "search=a", "--rename", "search=b"],
      "--rename: names search twice",
    ],
    [["toolsets", "remove", "acme", "extra"], "Unexpected argument: extra."],
    [
      ["toolsets", "remove", "acme", "--rename", "a=b"],
      "--rename is not an option of toolbus toolsets remove.",
    ],
    [["toolsets", "review"], "Missing <name>."],
    [["toolsets", "accept", "weather", "--tools", " , "], "--tools lists at least one tool id"],
    [["toolsets", "reject", "weather", "--tools", "alerts,Radar"], "--tools: snake_case"],
    [["toolsets", "accept", "weather", "--revision", "0"], "--revision is at least 1"],
  ])("exits 2 for %j: %s", async (argv, message) => {
    const run = await cli([...argv, ...CONNECTED]);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toMatch(/^toolbus: /);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.requests).toBe(0);
  });

  it("reports usage errors as JSON on stderr with --json", async () => {
    const run = await cli(["events", "run-1", "--limit", "0", "--json", ...CONNECTED]);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toEqual({
      error: {
        code: "usage_error",
        message: "--limit is at least 1",
        hint: expect.stringContaining("Usage: toolbus events <runId>"),
      },
    });
  });

  it("rejects a render file that is not an object, and one without a harness", async () => {
    await writeFile(join(scratch, "list.json"), "[1, 2]");
    await writeFile(join(scratch, "agent.json"), '{"name":"a","description":"b","prompt":"c"}');
    const list = await cli(["render-agent", "list.json", "--harness", "all", ...CONNECTED]);
    expect(list).toMatchObject({ code: 2, requests: 0 });
    expect(list.stderr).toContain("list.json must hold a JSON object");
    const noHarness = await cli(["render-agent", "agent.json", ...CONNECTED]);
    expect(noHarness).toMatchObject({ code: 2, requests: 0 });
    expect(noHarness.stderr).toContain("--harness is required");
  });

  it("rejects a registration file that is not an object or has no name", async () => {
    await writeFile(join(scratch, "toolsets.json"), '[{"kind":"http"}]');
    await writeFile(join(scratch, "nameless.json"), '{"kind":"mcp","url":"http://x/mcp"}');
    const list = await cli(["toolsets", "register", "toolsets.json", ...CONNECTED]);
    expect(list).toMatchObject({ code: 2, requests: 0 });
    expect(list.stderr).toContain("toolsets.json must hold a JSON object");
    const nameless = await cli(["toolsets", "register", "nameless.json", ...CONNECTED]);
    expect(nameless).toMatchObject({ code: 2, requests: 0 });
    expect(nameless.stderr).toContain('nameless.json has no "name"');
  });
});

describe("the command line's help", () => {
  it("prints every command in the general help", async () => {
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const run = await cli(argv);
      expect(run.code).toBe(0);
      for (const command of Object.values(COMMANDS)) {
        expect(run.stdout).toContain(`toolbus ${command.usage}`);
      }
      expect(run.stdout).toContain("Exit codes: 0 ok, 1 failure");
    }
  });

  it("prints one command's help with <command> --help, even with other problems", async () => {
    const run = await cli(["render-agent", "--help", "--harness", "vim"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: toolbus render-agent <file>/);
    expect(run.stdout).toContain("--out <dir>");
  });

  it("prints the toolsets commands' help: the file's shapes and --rename", async () => {
    const register = await cli(["toolsets", "register", "--help"]);
    expect(register.code).toBe(0);
    expect(register.stdout).toMatch(/^Usage: toolbus toolsets register <file>\n/);
    expect(register.stdout).toContain('{ kind: "http", name, description, owner,');
    expect(register.stdout).toContain("- reads standard input");
    const refresh = await cli(["toolsets", "refresh", "--help"]);
    expect(refresh.code).toBe(0);
    expect(refresh.stdout).toContain("--rename <remote>=<id>");
    const accept = await cli(["toolsets", "accept", "--help"]);
    expect(accept.code).toBe(0);
    expect(accept.stdout).toMatch(/^Usage: toolbus toolsets accept <name> \[--tools <a,b>\]/);
    expect(accept.stdout).toContain("--revision <n>");
  });
});

describe("the command line's group help and version", () => {
  it.each(["tools", "toolsets", "calls", "keys", "capabilities"])(
    "lists every %s command with toolbus <group> --help",
    async (group) => {
      const run = await cli([group, "--help"]);
      expect(run).toMatchObject({ code: 0, stderr: "", requests: 0 });
      expect(run.stdout).toMatch(new RegExp(`^Usage: toolbus ${group} <command>`));
      const commands = Object.entries(COMMANDS).filter(([name]) => name.startsWith(`${group} `));
      expect(commands.length).toBeGreaterThan(0);
      for (const [, command] of commands) expect(run.stdout).toContain(`toolbus ${command.usage}`);
    },
  );

  it("prints the package's version with --version", async () => {
    const manifest = JSON.parse(
      await readFile(join(import.meta.dirname, "../packages/client/package.json"), "utf8"),
    ) as { version: string };
    const run = await cli(["--version"]);
    expect(run).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: "", requests: 0 });
  });
});

describe("finding the endpoint and key", () => {
  it("says where to get them when there is neither", async () => {
    const run = await cli(["tools", "list"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("toolbus: No Toolbus endpoint.");
    expect(run.stderr).toContain("TOOLBUS_ENDPOINT");
  });

  it("rejects an endpoint that is not an http(s) URL", async () => {
    const run = await cli(["tools", "list"], {
      env: { TOOLBUS_ENDPOINT: "ftp://example.com", TOOLBUS_API_KEY: "k" },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("The endpoint from TOOLBUS_ENDPOINT (ftp://example.com)");
  });

  it("exits 2 for a .toolbus/local.json it cannot use", async () => {
    const project = join(scratch, "broken");
    await mkdir(join(project, ".toolbus"), { recursive: true });
    await writeFile(join(project, ".toolbus", "local.json"), "{not json");
    const broken = await cli(["tools", "list"], { cwd: project });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/local\.json is not JSON/);
    await writeFile(join(project, ".toolbus", "local.json"), '{"dynamodb":"http://x"}');
    const noApi = await cli(["tools", "list"], { cwd: project });
    expect(noApi.code).toBe(2);
    expect(noApi.stderr).toContain('has no "api" URL');
  });

  it("exits 2 for a local.json left by an npm start that was killed, naming the dead pid", async () => {
    const project = join(scratch, "stale");
    await mkdir(join(project, ".toolbus"), { recursive: true });
    // A pid that existed and is gone: a child that already exited.
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    await writeFile(
      join(project, ".toolbus", "local.json"),
      JSON.stringify({ api: "http://127.0.0.1:9", pid: gone }),
    );
    await writeFile(join(project, ".toolbus", "admin-key"), "tbk_admin_secret\n");
    const run = await cli(["tools", "list"], { cwd: project });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`no longer running (pid ${gone})`);
  });

  it("finds the endpoint in local.json and asks for a key when admin-key is missing", async () => {
    const project = join(scratch, "no-key");
    await mkdir(join(project, ".toolbus"), { recursive: true });
    await writeFile(join(project, ".toolbus", "local.json"), '{"api":"http://127.0.0.1:9"}');
    const run = await cli(["tools", "list"], { cwd: project });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("toolbus: No API key.");
  });

  it("uses what it found: a request goes to the local.json endpoint with the admin key", async () => {
    const project = join(scratch, "found");
    await mkdir(join(project, ".toolbus"), { recursive: true });
    await writeFile(join(project, ".toolbus", "local.json"), '{"api":"http://127.0.0.1:9"}');
    await writeFile(join(project, ".toolbus", "admin-key"), "tbk_admin_secret\n");
    const seen: { url: string; authorization: string | null }[] = [];
    let stdout = "";
    const code = await runCli(["tools", "list", "--json"], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: {},
      cwd: project,
      fetch: async (input, init) => {
        seen.push({
          url: String(input),
          authorization: new Headers(init?.headers).get("authorization"),
        });
        return Response.json({ tools: [] });
      },
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([]);
    expect(seen).toEqual([
      { url: "http://127.0.0.1:9/v1/tools", authorization: "Bearer tbk_admin_secret" },
    ]);
  });
});
