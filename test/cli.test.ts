import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createToolbusClient } from "@toolbus/client";
import { defineTool, ToolFailure } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const BIN = resolve(import.meta.dirname, "../packages/client/bin/toolbus.mjs");
const TEXT = "The cat sat on the mat. It was happy. Then it slept in the sun.";

const alwaysFails = defineTool({
  spec: {
    id: "test_always_fails",
    toolset: "test_fixtures",
    title: "Always fails",
    description: "Fails with upstream_error.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    throw new ToolFailure({
      kind: "upstream_error",
      message: "The upstream said no.",
      retryable: true,
      recovery: "replan",
    });
  },
});

let system: TestToolbus;
let server: ApiServer;
/** A folder without .toolbus: the CLI finds nothing there unless told. */
let emptyDir: string;
let scratch: string;

beforeAll(async () => {
  system = await startTestToolbus({
    tools: [...builtinTools, alwaysFails],
    toolsets: [
      ...builtinToolsets,
      { name: "test_fixtures", description: "Test tools", owner: "tests", kind: "builtin" },
    ],
  });
  server = await serveApi(system.app, { port: 0 });
  scratch = await mkdtemp(join(tmpdir(), "toolbus-cli-"));
  emptyDir = join(scratch, "empty");
  await mkdir(emptyDir);
});
afterAll(async () => {
  await server?.close();
  await system?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment without the caller's own Toolbus settings. */
function environment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TOOLBUS_ENDPOINT;
  delete env.TOOLBUS_API_KEY;
  return { ...env, ...extra };
}

/** Runs the installed launcher, as `npx toolbus` does, in a child process. */
function toolbus(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? emptyDir,
      env: environment(options.env),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", fail);
    child.on("close", (code, signal) => done({ code, signal, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

/** With the served system's endpoint and admin key as flags. */
function flags(...args: string[]): string[] {
  return [...args, "--endpoint", server.url, "--key", system.adminKey];
}

function adminClient() {
  return createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
}

async function callReadability(runId: string, callId: string) {
  await adminClient().call("readability_analyzer", { text: TEXT }, { runId, callId, wait: 10 });
  await system.settle();
}

describe("the toolbus command line", { timeout: 90_000 }, () => {
  it("prints help and exits 0", async () => {
    const [run, one] = await Promise.all([toolbus(["--help"]), toolbus(["call", "--help"])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: toolbus <command> [options]");
    for (const command of ["tools list", "call <tool>", "events <runId>", "render-agent", "keys"]) {
      expect(run.stdout).toContain(command);
    }
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("--input-file <file>");
  });

  it("exits 2 for usage errors, before any request", async () => {
    const [unknown, invalid, badJson] = await Promise.all([
      toolbus(flags("frobnicate")),
      toolbus(flags("call", "readability_analyzer", "--run", "r1", "--wait", "99")),
      toolbus(flags("call", "readability_analyzer", "--run", "r1", "--input", "{nope")),
    ]);
    expect(unknown).toMatchObject({ code: 2, stdout: "" });
    expect(unknown.stderr).toContain("toolbus: Unknown command: frobnicate.");
    expect(invalid).toMatchObject({ code: 2, stdout: "" });
    expect(invalid.stderr).toContain("--wait is at most 60");
    expect(badJson).toMatchObject({ code: 2, stdout: "" });
    expect(badJson.stderr).toContain("--input is not valid JSON");
  });

  it("exits 2 when it has no endpoint or no key", async () => {
    const [none, noKey] = await Promise.all([
      toolbus(["tools", "list"]),
      toolbus(["tools", "list", "--endpoint", server.url]),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("No Toolbus endpoint");
    expect(none.stderr).toContain("TOOLBUS_ENDPOINT");
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("No API key");
  });
});

describe("where the CLI finds its endpoint and key", { timeout: 90_000 }, () => {
  it("takes them from flags", async () => {
    const run = await toolbus(flags("tools", "list"));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("readability_analyzer");
  });

  it("takes them from TOOLBUS_ENDPOINT and TOOLBUS_API_KEY", async () => {
    const run = await toolbus(["tools", "list"], {
      env: { TOOLBUS_ENDPOINT: server.url, TOOLBUS_API_KEY: system.adminKey },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("readability_analyzer");
  });

  it("takes them from .toolbus/local.json and .toolbus/admin-key in the current folder", async () => {
    const project = join(scratch, "project");
    await mkdir(join(project, ".toolbus"), { recursive: true });
    await writeFile(
      join(project, ".toolbus", "local.json"),
      JSON.stringify({ dynamodb: "http://127.0.0.1:1", api: server.url, stage: "local" }),
    );
    await writeFile(join(project, ".toolbus", "admin-key"), `${system.adminKey}\n`);
    const run = await toolbus(["tools", "list"], { cwd: project });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("readability_analyzer");
  });

  it("lets flags win over the environment", async () => {
    const run = await toolbus(flags("tools", "list"), {
      env: { TOOLBUS_ENDPOINT: "http://127.0.0.1:9", TOOLBUS_API_KEY: "wrong-key" },
    });
    expect(run.code).toBe(0);
  });

  it("exits 1 naming the key's source when the API refuses the key", async () => {
    const env = { TOOLBUS_ENDPOINT: server.url, TOOLBUS_API_KEY: "wrong-key" };
    const [run, asJson] = await Promise.all([
      toolbus(["tools", "list"], { env }),
      toolbus(["tools", "list", "--json"], { env }),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("toolbus: The API key is not valid. [401 unauthorized]");
    expect(run.stderr).toContain("The API key from TOOLBUS_API_KEY was refused.");
    expect(run.stderr).not.toContain("wrong-key");
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({
      error: { code: "unauthorized", status: 401, message: "The API key is not valid." },
    });
  });

  it("exits 1 when nothing answers at the endpoint", async () => {
    const run = await toolbus(["tools", "list", "--endpoint", "http://127.0.0.1:9", "--key", "k"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("[network_error]");
    expect(run.stderr).toContain("Is Toolbus running at http://127.0.0.1:9 (from --endpoint)?");
  });
});

describe("toolbus tools", { timeout: 90_000 }, () => {
  it("lists tools as a table, and as JSON with --json", async () => {
    const [run, asJson] = await Promise.all([
      toolbus(flags("tools", "list")),
      toolbus(flags("tools", "list", "--json", "--category", "enhance")),
    ]);
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+TOOLSET\s+CATEGORY\s+AVAILABLE\s+TITLE$/);
    expect(rows.find((row) => row.startsWith("readability_analyzer "))).toMatch(
      /^readability_analyzer\s+text_analysis\s+enhance\s+yes\s+Readability analyzer$/,
    );
    // Columns line up: every row's second column starts where the header's does.
    const column = header?.indexOf("TOOLSET");
    for (const row of rows) expect(row[(column ?? 0) - 1]).toBe(" ");

    expect(asJson.code).toBe(0);
    const tools = JSON.parse(asJson.stdout) as { id: string; category: string }[];
    expect(tools.map((tool) => tool.id)).toContain("readability_analyzer");
    expect(tools.every((tool) => tool.category === "enhance")).toBe(true);
  });

  it("shows one tool, and exits 1 for an unknown one", async () => {
    const [run, asJson, missing] = await Promise.all([
      toolbus(flags("tools", "show", "readability_analyzer")),
      toolbus(flags("tools", "show", "readability_analyzer", "--json")),
      toolbus(flags("tools", "show", "no_such_tool")),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Tool:\s+readability_analyzer - Readability analyzer$/m);
    expect(run.stdout).toMatch(/^Toolset:\s+text_analysis$/m);
    expect(run.stdout).toContain("When to use:");
    expect(run.stdout).toContain("Input schema:");
    expect(run.stdout).toContain('"text"');

    expect(JSON.parse(asJson.stdout)).toMatchObject({ id: "readability_analyzer", revision: 1 });

    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Tool no_such_tool does not exist. [404 not_found]");
  });
});

describe("toolbus call", { timeout: 90_000 }, () => {
  it("calls a tool and prints the result", async () => {
    const runId = system.runId();
    const run = await toolbus(
      flags(
        "call",
        "readability_analyzer",
        "--run",
        runId,
        "--input",
        JSON.stringify({ text: TEXT }),
      ),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Run:\\s+${runId}$`, "m"));
    expect(run.stdout).toMatch(/^Tool:\s+readability_analyzer \(text_analysis\)$/m);
    expect(run.stdout).toMatch(/^Status:\s+succeeded \(\d+ ms\)$/m);
    expect(run.stdout).toMatch(/Flesch/i);
  });

  it("prints the call view with --json, with the given call id and wait", async () => {
    const runId = system.runId();
    const run = await toolbus(
      flags(
        "call",
        "readability_analyzer",
        "--run",
        runId,
        "--call-id",
        "cli-1",
        "--wait",
        "10",
        "--input",
        JSON.stringify({ text: TEXT }),
        "--json",
      ),
    );
    expect(run.code).toBe(0);
    const call = JSON.parse(run.stdout);
    expect(call).toMatchObject({
      parentRunId: runId,
      callId: "cli-1",
      status: "succeeded",
      result: { data: { sentences: 3, words: 15 } },
    });

    // calls show reads it back.
    const [shown, table] = await Promise.all([
      toolbus(flags("calls", "show", runId, "cli-1", "--json")),
      toolbus(flags("calls", "show", runId, "cli-1")),
    ]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(call);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^Call:\s+cli-1$/m);
  });

  it("reads the input from a file or from standard input", async () => {
    const file = join(scratch, "input.json");
    await writeFile(file, JSON.stringify({ text: TEXT }));
    const call = (...args: string[]) =>
      flags("call", "readability_analyzer", "--run", system.runId(), ...args);
    const [fromFile, fromStdin, missing] = await Promise.all([
      toolbus(call("--input-file", file, "--json")),
      toolbus(call("--input-file", "-", "--json"), { stdin: JSON.stringify({ text: TEXT }) }),
      toolbus(call("--input-file", "nope.json")),
    ]);
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout).status).toBe("succeeded");
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout).status).toBe("succeeded");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.json does not exist.");
  });

  it("exits 1 printing the failure kind when the tool failed", async () => {
    const [run, asJson] = await Promise.all([
      toolbus(flags("call", "test_always_fails", "--run", system.runId())),
      toolbus(flags("call", "test_always_fails", "--run", system.runId(), "--json")),
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Status:\s+failed/m);
    expect(run.stdout).toMatch(/^Failure:\s+upstream_error: The upstream said no\./m);
    expect(run.stderr).toBe(
      "toolbus: test_always_fails failed: upstream_error: The upstream said no.\n",
    );

    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      status: "failed",
      result: { failure: { kind: "upstream_error", recovery: "replan" } },
    });
    expect(JSON.parse(asJson.stderr)).toMatchObject({
      error: { code: "tool_failed", details: { kind: "upstream_error" } },
    });
  });

  it("exits 1 with each failing path when the API rejects the input", async () => {
    const run = await toolbus(
      flags(
        "call",
        "readability_analyzer",
        "--run",
        system.runId(),
        "--input",
        '{"text":"","extra":1}',
      ),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("[400 invalid_request]");
    expect(run.stderr).toMatch(/^ {2}text: /m);
    expect(run.stderr).toMatch(/^ {2}extra: /m);
  });
});

describe("toolbus events", { timeout: 90_000 }, () => {
  it("prints a run's events as a table, and as one JSON event per line", async () => {
    const runId = system.runId();
    await callReadability(runId, "first");
    await callReadability(runId, "second");

    const [run, asJson, empty] = await Promise.all([
      toolbus(flags("events", runId, "--limit", "1")),
      toolbus(flags("events", runId, "--json")),
      toolbus(flags("events", system.runId())),
    ]);
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^TIME\s+EVENT\s+CALL\s+TOOL\s+DETAIL$/);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(
      /ToolCallScheduled\s+first\s+readability_analyzer\s+by admin-bootstrap/,
    );
    expect(rows[1]).toMatch(
      /ToolResultReceived\s+first\s+readability_analyzer\s+succeeded \(\d+ ms/,
    );
    expect(run.stderr).toMatch(
      new RegExp(`^Read on later: toolbus events ${runId} --cursor \\S+$`, "m"),
    );

    expect(asJson.code).toBe(0);
    const events = asJson.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { detailType: string; detail: { callId: string } });
    expect(events.map((event) => `${event.detail.callId}:${event.detailType}`)).toEqual([
      "first:ToolCallScheduled",
      "first:ToolResultReceived",
      "second:ToolCallScheduled",
      "second:ToolResultReceived",
    ]);

    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/^No events in run /);
  });

  it("follows a run until interrupted, printing events of calls made meanwhile", async () => {
    const runId = system.runId();
    await callReadability(runId, "before");
    const child = spawn(process.execPath, [BIN, ...flags("events", runId, "--follow", "--json")], {
      cwd: emptyDir,
      env: environment(),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const lines = () => stdout.split("\n").filter(Boolean);
    const waitForLines = async (count: number) => {
      const deadline = Date.now() + 30_000;
      while (lines().length < count) {
        if (Date.now() > deadline)
          throw new Error(`waited for ${count} lines: ${stdout} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const exited = new Promise<number | null>((done) => child.on("close", (code) => done(code)));
    try {
      await waitForLines(2);
      await callReadability(runId, "after");
      await waitForLines(4);
    } finally {
      child.kill("SIGINT");
    }
    expect(await exited).toBe(130);
    expect(
      lines().map((line) => {
        const event = JSON.parse(line) as { detailType: string; detail: { callId: string } };
        return `${event.detail.callId}:${event.detailType}`;
      }),
    ).toEqual([
      "before:ToolCallScheduled",
      "before:ToolResultReceived",
      "after:ToolCallScheduled",
      "after:ToolResultReceived",
    ]);
  });
});

describe("toolbus render-agent", { timeout: 90_000 }, () => {
  const agent = {
    name: "reviewer",
    description: "Reviews drafts.",
    prompt: "Review the draft.",
    tools: ["Read", "Grep", "Bash"],
  };

  it("prints the rendered file for one harness", async () => {
    const file = join(scratch, "reviewer.json");
    await writeFile(file, JSON.stringify(agent));
    const [run, asJson] = await Promise.all([
      toolbus(flags("render-agent", file, "--harness", "claude-code")),
      toolbus(flags("render-agent", file, "--harness", "copilot", "--json")),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^---\n/);
    expect(run.stdout).toContain("name: reviewer");
    expect(run.stdout).toContain("Review the draft.");

    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      harness: "copilot",
      path: ".github/agents/reviewer.agent.md",
    });
  });

  it("writes every harness's file under --out, from a render request file", async () => {
    const file = join(scratch, "request.json");
    await writeFile(file, JSON.stringify({ agent, harness: "opencode" }));
    const out = join(scratch, "rendered");
    const [run, own] = await Promise.all([
      toolbus(flags("render-agent", file, "--harness", "all", "--out", out)),
      toolbus(flags("render-agent", file)),
    ]);
    expect(run.code).toBe(0);
    // With Toolbus's catalog (the default), the servers files the agents name come too.
    expect(run.stdout.trimEnd().split("\n").sort()).toEqual(
      [
        ".claude/agents/reviewer.md",
        ".github/agents/reviewer.agent.md",
        ".mcp.json",
        ".opencode/agents/reviewer.md",
        "opencode.json",
      ].map((path) => `Wrote ${join(out, path)}`),
    );
    expect(await readFile(join(out, ".claude/agents/reviewer.md"), "utf8")).toContain(
      "Review the draft.",
    );

    // Without --harness the request's own harness is used, and everything is printed.
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^---\ndescription: Reviews drafts\.\n/);
    expect(own.stdout).toContain("Review the draft.");
  });

  it("merges the Toolbus MCP server into the project's servers file, keeping the servers already there", async () => {
    const file = join(scratch, "enriched.json");
    await writeFile(
      file,
      JSON.stringify({ agent, enrichers: [{ type: "addToolbusCatalog" }], harness: "all" }),
    );
    const out = join(scratch, "enriched");
    await mkdir(out, { recursive: true });
    const other = { type: "stdio", command: "other-server" };
    await writeFile(join(out, ".mcp.json"), JSON.stringify({ mcpServers: { other } }));
    const run = await toolbus(flags("render-agent", file, "--out", out));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Wrote ${join(out, ".mcp.json")}`);
    expect(run.stdout).toContain(`Wrote ${join(out, "opencode.json")}`);
    const claude = JSON.parse(await readFile(join(out, ".mcp.json"), "utf8"));
    expect(claude.mcpServers.other).toEqual(other);
    expect(claude.mcpServers.toolbus).toMatchObject({
      type: "http",
      // Claude Code's own syntax for an environment variable, written as is.
      headers: { Authorization: `Bearer ${"$"}{TOOLBUS_API_KEY}` },
    });
    const opencode = JSON.parse(await readFile(join(out, "opencode.json"), "utf8"));
    expect(opencode.$schema).toBe("https://opencode.ai/config.json");
    expect(Object.keys(opencode.mcp)).toEqual(["toolbus"]);

    await writeFile(join(out, "opencode.json"), "{ not json");
    const broken = await toolbus(flags("render-agent", file, "--out", out));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("opencode.json is not JSON");
  });

  it("adds Toolbus's catalog tools by default, and leaves them out with --no-toolbus-tools", async () => {
    const file = join(scratch, "plain-agent.json");
    await writeFile(file, JSON.stringify(agent));
    const [plain, without, asJson, help] = await Promise.all([
      toolbus(flags("render-agent", file, "--harness", "claude-code")),
      toolbus(flags("render-agent", file, "--harness", "claude-code", "--no-toolbus-tools")),
      toolbus(flags("render-agent", file, "--harness", "opencode", "--json")),
      toolbus(["render-agent", "--help"]),
    ]);
    // The catalog's optional tools the agent may use, as tools of Toolbus's MCP server.
    const selection = (await (
      await system.request("/v1/select", { method: "POST", json: {} })
    ).json()) as { tools: string[] };
    const optional = new Set(
      [...builtinTools, alwaysFails]
        .filter((tool) => tool.spec.optionality !== "core")
        .map((tool) => tool.spec.id),
    );
    const offered = selection.tools.filter((id) => optional.has(id));
    expect(offered).toContain("readability_analyzer");
    expect(plain.code).toBe(0);
    const tools = plain.stdout.match(/^tools: (.+)$/m)?.[1]?.split(", ") ?? [];
    expect(tools.slice(0, 3)).toEqual(["Read", "Grep", "Bash"]);
    expect(tools.slice(3).sort()).toEqual(offered.map((id) => `mcp__toolbus__${id}`).sort());
    expect(plain.stdout).toMatch(/^mcpServers:\n {2}- toolbus$/m);
    expect(plain.stderr).toContain('the MCP servers it uses go in .mcp.json (under "mcpServers")');

    expect(without.code).toBe(0);
    expect(without.stdout).toMatch(/^tools: Read, Grep, Bash$/m);
    expect(without.stdout).not.toContain("toolbus");
    expect(without.stderr).toBe("");

    expect(asJson.code).toBe(0);
    const rendered = JSON.parse(asJson.stdout) as { mcpServersFile?: { content: string } };
    const servers = JSON.parse(rendered.mcpServersFile?.content ?? "{}");
    expect(servers.mcp.toolbus).toMatchObject({ type: "remote", url: `${server.url}/mcp` });

    expect(help.code).toBe(0);
    expect(help.stdout).toContain("[--no-toolbus-tools]");
    expect(help.stdout).toMatch(/^ {2}--no-toolbus-tools {2}leave Toolbus's catalog out/m);
  });

  it("says how to render without the catalog when the agent's mode cannot be selected for", async () => {
    const file = join(scratch, "unknown-mode.json");
    await writeFile(file, JSON.stringify({ ...agent, mode: "no_such_mode" }));
    const [refused, asJson, without] = await Promise.all([
      toolbus(flags("render-agent", file, "--harness", "claude-code")),
      toolbus(flags("render-agent", file, "--harness", "claude-code", "--json")),
      toolbus(flags("render-agent", file, "--harness", "claude-code", "--no-toolbus-tools")),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Unknown mode no_such_mode. [400 invalid_request]");
    expect(refused.stderr).toMatch(/--no-toolbus-tools renders the agent without it\.\n$/);
    expect(JSON.parse(asJson.stderr).error.hint).toContain("--no-toolbus-tools");
    expect(without.code).toBe(0);
    expect(without.stdout).toContain("Review the draft.");
  });

  it("keeps a request's own addToolbusCatalog, and --no-toolbus-tools removes it", async () => {
    const file = join(scratch, "search-surface.json");
    await writeFile(
      file,
      JSON.stringify({
        agent,
        harness: "claude-code",
        enrichers: [{ type: "addToolbusCatalog", surface: "search", server: "catalog" }],
      }),
    );
    const [own, off] = await Promise.all([
      toolbus(flags("render-agent", file)),
      toolbus(flags("render-agent", file, "--no-toolbus-tools")),
    ]);
    expect(own.code).toBe(0);
    // Its options stand (the search surface's two tools, its server name), added once.
    expect(own.stdout).toMatch(
      /^tools: Read, Grep, Bash, mcp__catalog__search_tools, mcp__catalog__call_tool$/m,
    );
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(/^tools: Read, Grep, Bash$/m);
  });

  it("prints every file with its path for all harnesses", async () => {
    const file = join(scratch, "reviewer-all.json");
    await writeFile(file, JSON.stringify(agent));
    const run = await toolbus(flags("render-agent", file, "--harness", "all"));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("==> .claude/agents/reviewer.md <==");
    expect(run.stdout).toContain("==> .opencode/agents/reviewer.md <==");
    expect(run.stdout).toContain("==> .github/agents/reviewer.agent.md <==");
  });

  it("exits 2 for a missing file or harness and 1 when the API rejects the agent", async () => {
    const file = join(scratch, "bad-agent.json");
    await writeFile(file, JSON.stringify({ name: "../escape", description: "x", prompt: "y" }));
    const [missing, noHarness, rejected] = await Promise.all([
      toolbus(flags("render-agent", "nope.json", "--harness", "all")),
      toolbus(flags("render-agent", file)),
      toolbus(flags("render-agent", file, "--harness", "claude-code")),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.json does not exist.");
    expect(noHarness.code).toBe(2);
    expect(noHarness.stderr).toContain("--harness is required");
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toContain("[400 invalid_request]");
    expect(rejected.stderr).toMatch(/^ {2}agent\.name: /m);
  });
});

describe("toolbus keys", { timeout: 90_000 }, () => {
  it("creates, lists and revokes a key", async () => {
    const created = await toolbus(
      flags("keys", "create", "--name", "cli-test", "--role", "member"),
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Key:\s+\S+$/m);
    expect(created.stdout).toContain("Keep the key now: it is shown only once.");
    const keyId = /^Key id:\s+(\S+)$/m.exec(created.stdout)?.[1] ?? "";
    const key = /^Key:\s+(\S+)$/m.exec(created.stdout)?.[1] ?? "";

    // The new key works, and the list shows it without the key itself.
    const [asMember, listed] = await Promise.all([
      toolbus(["tools", "list", "--endpoint", server.url, "--key", key]),
      toolbus(flags("keys", "list")),
    ]);
    expect(asMember.code).toBe(0);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^KEY ID\s+NAME\s+ROLE\s+CREATED\s+LAST USED\s+STATUS$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${keyId}\\s+cli-test\\s+member\\s+.*active$`, "m"));
    expect(listed.stdout).not.toContain(key);

    const revoked = await toolbus(flags("keys", "revoke", keyId));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^Revoked key ${keyId} \\(cli-test, member\\) at `));

    const [asJson, refused] = await Promise.all([
      toolbus(flags("keys", "list", "--json")),
      toolbus(["tools", "list", "--endpoint", server.url, "--key", key]),
    ]);
    const keys = JSON.parse(asJson.stdout) as { keyId: string; revokedAt?: string }[];
    expect(keys.find((record) => record.keyId === keyId)?.revokedAt).toEqual(expect.any(String));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401 unauthorized");
  });

  it("prints the new key as JSON, and exits 1 for an unknown role or key id", async () => {
    const [created, badRole, unknown] = await Promise.all([
      toolbus(flags("keys", "create", "--name", "cli-json", "--role", "member", "--json")),
      toolbus(flags("keys", "create", "--name", "x", "--role", "emperor")),
      toolbus(flags("keys", "revoke", "no-such-key")),
    ]);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      name: "cli-json",
      role: "member",
      key: expect.any(String),
      keyId: expect.any(String),
    });
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain("Unknown role emperor. [400 invalid_request]");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("[404");
  });
});
