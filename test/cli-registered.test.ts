import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// `toolbus toolsets ...` run as the installed launcher against the real system, registering a
// loopback http API and a loopback MCP server (the outbound guard allows 127.0.0.1 here).

const BIN = resolve(import.meta.dirname, "../packages/client/bin/toolbus.mjs");

const lookup = textTool(
  "lookupStation",
  "Finds a weather station.",
  (args) => `station near ${args.q}`,
  { q: { type: "string" } },
);
const alerts = textTool("alerts", "Active weather alerts.", "none");
const radar = textTool("radar", "The latest radar picture.", "clear");

let upstream: Upstream;
let mcp: McpUpstream;
let system: TestToolbus;
let server: ApiServer;
let scratch: string;
let emptyDir: string;

function httpRegistration(description = "Reads one inventory item by id.") {
  return {
    kind: "http",
    name: "cli_acme",
    description: "Acme's inventory API",
    owner: "team-acme",
    auth: { header: "X-Api-Key", secret: "TOOLSET_ACME_KEY" },
    tools: [
      {
        id: "cli_acme_get_item",
        title: "Get an Acme item",
        description,
        category: "reference",
        usageHint: "Look up an inventory item when the user names its id.",
        url: `${upstream.origin}/v1/items/{id}`,
        inputSchema: {
          type: "object",
          properties: { id: { type: "string", minLength: 1 } },
          required: ["id"],
        },
      },
      {
        id: "cli_acme_list_items",
        title: "List Acme items",
        description: "Lists inventory items.",
        category: "reference",
        usageHint: "List items when asked what is in stock.",
        url: `${upstream.origin}/v1/items`,
        inputSchema: { type: "object", properties: {} },
      },
    ],
  };
}

const mcpRegistration = () => ({
  kind: "mcp",
  name: "cli_weather",
  description: "The weather team's MCP server",
  owner: "team-weather",
  url: mcp.url,
  defaults: { category: "research" },
  // Served as the server lists them, so a refresh's diff shows every change; holding them for
  // review is test/cli-review.test.ts's.
  updates: "follow",
});

beforeAll(async () => {
  upstream = await startUpstream((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ id: "7", name: "Widget" }));
  });
  mcp = await startMcpUpstream([lookup, alerts]);
  system = await startTestToolbus({
    config: { outbound: { allowHosts: ["127.0.0.1"] } },
    secrets: { TOOLSET_ACME_KEY: "s3cret" },
  });
  server = await serveApi(system.app, { port: 0 });
  scratch = await mkdtemp(join(tmpdir(), "toolbus-cli-registered-"));
  emptyDir = join(scratch, "empty");
  await mkdir(emptyDir);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await system?.stop();
  await mcp?.close();
  await upstream?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the installed launcher, as `npx toolbus` does, with the system's endpoint and key. */
function toolbus(args: string[], options: { stdin?: string } = {}): Promise<Run> {
  const env = { ...process.env };
  delete env.TOOLBUS_ENDPOINT;
  delete env.TOOLBUS_API_KEY;
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [BIN, ...args, "--endpoint", server.url, "--key", system.adminKey],
      { cwd: emptyDir, env },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

async function file(name: string, content: unknown): Promise<string> {
  const path = join(scratch, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** The diff table's rows by change: `{ added: "2  a, b", ... }`. */
function diffRows(stdout: string): Record<string, string> {
  const [, table = ""] = stdout.split("\n\n");
  const [header, ...rows] = table.trimEnd().split("\n");
  expect(header).toMatch(/^CHANGE\s+COUNT\s+TOOLS$/);
  return Object.fromEntries(
    rows.map((row) => {
      const [change = "", ...rest] = row.split(/\s+/);
      return [change, rest.join(" ")];
    }),
  );
}

describe("toolbus toolsets register", { timeout: 90_000 }, () => {
  it("registers an http toolset from a file, prints its diff, and tools list shows its tools", async () => {
    const path = await file("acme.json", httpRegistration());
    const run = await toolbus(["toolsets", "register", path]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^Registered toolset cli_acme \(http, owner team-acme, revision 1\): 2 tools\.\n/,
    );
    expect(diffRows(run.stdout)).toEqual({
      added: "2 cli_acme_get_item, cli_acme_list_items",
      removed: "0 -",
      changed: "0 -",
      unchanged: "0 -",
    });

    const listed = await toolbus(["tools", "list", "--toolset", "cli_acme"]);
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+TOOLSET\s+CATEGORY\s+AVAILABLE\s+TITLE$/);
    expect(rows).toEqual([
      expect.stringMatching(/^cli_acme_get_item\s+cli_acme\s+reference\s+yes\s+Get an Acme item$/),
      expect.stringMatching(/^cli_acme_list_items\s+cli_acme\s+reference\s+yes\s+List Acme items$/),
    ]);
  });

  it("replaces it from standard input, printing the changed tool, and as JSON with --json", async () => {
    const changed = JSON.stringify(httpRegistration("Reads one item, with its stock level."));
    const run = await toolbus(["toolsets", "register", "-"], { stdin: changed });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Replaced toolset cli_acme \(http, owner team-acme, revision 2\)/);
    expect(diffRows(run.stdout)).toMatchObject({
      added: "0 -",
      changed: "1 cli_acme_get_item",
      unchanged: "1 cli_acme_list_items",
    });

    const again = await toolbus(["toolsets", "register", "-", "--json"], { stdin: changed });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      created: false,
      toolset: { name: "cli_acme", kind: "http", revision: 3 },
      tools: [{ id: "cli_acme_get_item" }, { id: "cli_acme_list_items" }],
      diff: {
        added: [],
        removed: [],
        changed: [],
        unchanged: ["cli_acme_get_item", "cli_acme_list_items"],
      },
    });
  });

  it("exits 2 for a file that is not JSON, naming the file", async () => {
    const path = await file("broken.json", '{"kind": "http", "name": ');
    const run = await toolbus(["toolsets", "register", path]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^toolbus: .*broken\.json is not valid JSON: /);
  });

  it("exits 1 with the API's message and each failing path when the API refuses the file", async () => {
    const registration = httpRegistration();
    const [first] = registration.tools;
    const bad = {
      ...registration,
      name: "cli_bad",
      owner: "",
      tools: [{ ...first, id: "cli_bad_get", category: "fun" }],
    };
    const path = await file("bad.json", bad);
    const [run, asJson] = await Promise.all([
      toolbus(["toolsets", "register", path]),
      toolbus(["toolsets", "register", path, "--json"]),
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^toolbus: .+ \[400 invalid_request\]$/m);
    expect(run.stderr).toMatch(/^ {2}owner: /m);
    expect(run.stderr).toMatch(/^ {2}tools\.0\.category: /m);

    expect(asJson.code).toBe(1);
    const { error } = JSON.parse(asJson.stderr) as {
      error: { code: string; status: number; details: { path: string }[] };
    };
    expect(error).toMatchObject({ code: "invalid_request", status: 400 });
    expect(error.details.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(["owner", "tools.0.category"]),
    );
    const listed = await toolbus(["tools", "list", "--toolset", "cli_bad"]);
    expect(listed.stdout).toBe("No tools match.\n");
  });

  it("exits 1 with the API's message for a registration the API checks beyond its schema", async () => {
    const registration = httpRegistration();
    const path = await file("secretless.json", {
      ...registration,
      name: "cli_secretless",
      auth: { header: "X-Api-Key", secret: "TOOLSET_CLI_MISSING" },
      tools: registration.tools.map((tool) => ({ ...tool, id: `${tool.id}_2` })),
    });
    const run = await toolbus(["toolsets", "register", path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^toolbus: The secret TOOLSET_CLI_MISSING is not set on this stage\..*\[400 invalid_request\]$/m,
    );
  });
});

describe("toolbus toolsets refresh", { timeout: 90_000 }, () => {
  it("prints what the MCP server added, removed and changed since it was registered", async () => {
    const path = await file("weather.json", mcpRegistration());
    const registered = await toolbus(["toolsets", "register", path]);
    expect(registered.code).toBe(0);
    expect(diffRows(registered.stdout).added).toBe("2 alerts, lookup_station");

    mcp.setTools([
      { ...alerts, tool: { ...alerts.tool, description: "Alerts now, by region." } },
      radar,
    ]);
    const run = await toolbus(["toolsets", "refresh", "cli_weather"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^Refreshed toolset cli_weather \(mcp, owner team-weather, revision \d+\): 2 tools\.\n/,
    );
    expect(diffRows(run.stdout)).toEqual({
      added: "1 radar",
      removed: "1 lookup_station",
      changed: "1 alerts",
      unchanged: "0 -",
    });
  });

  it("gives a remote tool another id with --rename, as JSON with --json", async () => {
    const run = await toolbus([
      "toolsets",
      "refresh",
      "cli_weather",
      "--rename",
      "radar=weather_radar",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const outcome = JSON.parse(run.stdout) as {
      toolset: { source: { renames: Record<string, string> } };
      diff: Record<string, string[]>;
    };
    expect(outcome.diff).toEqual({
      added: ["weather_radar"],
      removed: ["radar"],
      changed: [],
      unchanged: ["alerts"],
    });
    expect(outcome.toolset.source.renames).toEqual({ radar: "weather_radar" });
  });

  it("exits 1 for an http toolset and for an unknown one", async () => {
    const [http, unknown] = await Promise.all([
      toolbus(["toolsets", "refresh", "cli_acme"]),
      toolbus(["toolsets", "refresh", "no_such_toolset"]),
    ]);
    expect(http.code).toBe(1);
    expect(http.stderr).toMatch(/\[409 \w+\]$/m);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no_such_toolset.*\[404 not_found\]$/m);
  });
});

describe("toolbus toolsets remove", { timeout: 90_000 }, () => {
  it("removes a toolset, printing the removed ids, and its tools leave the list", async () => {
    const run = await toolbus(["toolsets", "remove", "cli_acme"]);
    const asJson = await toolbus(["toolsets", "remove", "cli_weather", "--json"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      "Removed toolset cli_acme and its 2 tools: cli_acme_get_item, cli_acme_list_items.\n",
    );
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toEqual({ removed: ["alerts", "weather_radar"] });

    const listed = await toolbus(["tools", "list", "--json"]);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((tool) => tool.id);
    expect(ids).not.toContain("cli_acme_get_item");
    expect(ids).not.toContain("weather_radar");
  });

  it("exits 1 for a toolset that is not registered", async () => {
    const run = await toolbus(["toolsets", "remove", "cli_acme"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\[404 not_found\]$/m);
  });
});
