import { createToolbusClient } from "@toolbus/client";
import { secretCapability } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolbusCli } from "./support/cli";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The catalog and capability commands against a running API over HTTP, in this process
// (cli.test.ts runs the launcher itself in a child process).

let system: TestToolbus;
let server: ApiServer;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus({
    tools: builtinTools,
    toolsets: builtinToolsets,
    capabilities: [
      secretCapability("test_present", "TEST_PRESENT", "A secret the test sets."),
      secretCapability("test_absent", "TEST_ABSENT", "A secret no test sets."),
    ],
    secrets: { TEST_PRESENT: "yes" },
  });
  server = await serveApi(system.app, { port: 0 });
  const admin = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
  memberKey = (await admin.keys.create({ name: "cli-member", role: "member" })).key;
});
afterAll(async () => {
  await server?.close();
  await system?.stop();
});

const toolbus = (argv: string[], key = system.adminKey) => runToolbusCli(server.url, argv, key);

async function selected(): Promise<string[]> {
  const response = await system.request("/v1/select", { method: "POST", json: {} });
  return ((await response.json()) as { tools: string[] }).tools;
}

describe("toolbus tools enable / disable", () => {
  it("takes a tool out of selection and puts it back", async () => {
    const disabled = await toolbus(["tools", "disable", "readability_analyzer"]);
    expect(disabled).toMatchObject({ code: 0, stderr: "" });
    expect(disabled.stdout).toMatch(/^Disabled tool readability_analyzer \(revision \d+\)\.\n$/);
    expect(await selected()).not.toContain("readability_analyzer");

    const enabled = await toolbus(["tools", "enable", "readability_analyzer", "--json"]);
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.stdout)).toMatchObject({
      id: "readability_analyzer",
      availability: { enabled: true },
    });
    expect(await selected()).toContain("readability_analyzer");
  });

  it("is refused to a member with the API's 403", async () => {
    const run = await toolbus(["tools", "disable", "readability_analyzer"], memberKey);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("[403");
    expect(await selected()).toContain("readability_analyzer");
  });

  it("says which tool does not exist", async () => {
    const run = await toolbus(["tools", "enable", "no_such_tool"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("[404");
  });
});

describe("toolbus tools availability", () => {
  it("shows, narrows and widens who may use a tool, keeping the fields not given", async () => {
    const shown = await toolbus(["tools", "availability", "static_links"]);
    expect(shown).toMatchObject({ code: 0, stderr: "" });
    expect(shown.stdout).toMatch(
      /^Tool static_links: enabled, every mode, every role \(revision \d+\)\.\n$/,
    );

    const narrowed = await toolbus([
      "tools",
      "availability",
      "static_links",
      "--min-role",
      "admin",
    ]);
    expect(narrowed).toMatchObject({ code: 0, stderr: "" });
    expect(narrowed.stdout).toMatch(
      /^Set static_links: enabled, every mode, role admin and above \(revision \d+\)\.\n$/,
    );
    const member = createToolbusClient({ baseUrl: server.url, apiKey: memberKey });
    const listed = await member.tools.list();
    expect(listed.find((tool) => tool.id === "static_links")).toMatchObject({
      available: false,
      reasons: ["role"],
    });

    const modes = await toolbus([
      "tools",
      "availability",
      "static_links",
      "--modes",
      "default",
      "--json",
    ]);
    expect(modes.code).toBe(0);
    expect(JSON.parse(modes.stdout)).toMatchObject({
      availability: { enabled: true, modes: ["default"], minRole: "admin" },
    });

    const widened = await toolbus([
      "tools",
      "availability",
      "static_links",
      "--all-roles",
      "--all-modes",
      "--json",
    ]);
    expect(widened.code).toBe(0);
    expect(JSON.parse(widened.stdout).availability).toEqual({ enabled: true });
  });

  it("refuses a role the stage does not have with the API's 400, and a member with 403", async () => {
    const unknown = await toolbus(["tools", "availability", "static_links", "--min-role", "owner"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("[400");
    const refused = await toolbus(
      ["tools", "availability", "static_links", "--enabled", "false"],
      memberKey,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("[403");
    const bad = await toolbus(["tools", "availability", "static_links", "--enabled", "maybe"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--enabled is true or false");
  });
});

describe("toolbus toolsets list / show", () => {
  it("lists every toolset with its kind and owner", async () => {
    const run = await toolbus(["toolsets", "list"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^NAME +KIND +OWNER +DESCRIPTION\n/);
    for (const toolset of builtinToolsets) {
      expect(run.stdout).toMatch(new RegExp(`^${toolset.name} +builtin +${toolset.owner} `, "m"));
    }
    const asJson = await toolbus(["toolsets", "list", "--json"]);
    expect((JSON.parse(asJson.stdout) as { name: string }[]).map((t) => t.name).sort()).toEqual(
      builtinToolsets.map((toolset) => toolset.name).sort(),
    );
  });

  it("shows one toolset with exactly its tools", async () => {
    const toolset = builtinToolsets[0];
    if (!toolset) throw new Error("no built-in toolset");
    const run = await toolbus(["toolsets", "show", toolset.name]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(new RegExp(`^Toolset: +${toolset.name}$`, "m"));
    const ids = builtinTools
      .filter((tool) => tool.spec.toolset === toolset.name)
      .map((tool) => tool.spec.id);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(run.stdout).toMatch(new RegExp(`^${id} `, "m"));

    const missing = await toolbus(["toolsets", "show", "no_such_toolset"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("[404");
  });
});

describe("toolbus capabilities list / refresh", () => {
  it("shows each capability, available or why not, and where it was read", async () => {
    const run = await toolbus(["capabilities", "list"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^NAME +AVAILABLE +SOURCE +CHECKED\n/);
    expect(run.stdout).toMatch(/^test_present +yes +\S+/m);
    expect(run.stdout).toMatch(/^test_absent +no \(.+\)/m);
  });

  it("checks them again on refresh (admin only)", async () => {
    const before = JSON.parse((await toolbus(["capabilities", "list", "--json"])).stdout) as {
      name: string;
      checkedAt: string;
    }[];
    const refreshed = await toolbus(["capabilities", "refresh", "--json"]);
    expect(refreshed.code).toBe(0);
    const after = JSON.parse(refreshed.stdout) as { name: string; checkedAt: string }[];
    expect(after.map((capability) => capability.name).sort()).toEqual(
      before.map((capability) => capability.name).sort(),
    );
    // Checked again, not read back: no capability's check is older than before.
    for (const capability of after) {
      const earlier = before.find((entry) => entry.name === capability.name);
      expect(capability.checkedAt >= (earlier?.checkedAt ?? "")).toBe(true);
    }
    const denied = await toolbus(["capabilities", "refresh"], memberKey);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("[403");
  });
});

describe("toolbus tools search", () => {
  it("prints the tools found for a need, best first, and the same as JSON", async () => {
    const found = await toolbus([
      "tools",
      "search",
      "how readable is this paragraph",
      "--limit",
      "3",
    ]);
    expect(found).toMatchObject({ code: 0, stderr: "" });
    const lines = found.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+SCORE\s+TITLE\s+MATCHED$/);
    expect(lines[1]).toMatch(/^readability_analyzer\s+\d+\.\d\d\s/);
    expect(lines.length).toBeLessThanOrEqual(4);

    const asJson = await toolbus(["tools", "search", "readability", "--json"]);
    const body = JSON.parse(asJson.stdout) as { tools: Array<{ id: string }> };
    expect(body.tools[0]?.id).toBe("readability_analyzer");
  });

  it("says with --explain which words each tool matched, and shows an admin what was left out", async () => {
    const found = await toolbus(["tools", "search", "check calendar events", "--explain"]);
    expect(found).toMatchObject({ code: 0, stderr: "" });
    // Each row's last column names the query's words and the fields they were found in.
    expect(found.stdout).toMatch(/\b(check|calendar|event)s? in [a-z, ]+/i);
    // The calendar needs a capability this stage lacks: an admin is told, in words.
    expect(found.stdout).toMatch(/Left out for you[^\n]*\n\s+calendar: needs google_calendar/);
  });

  it("exits 2 for a missing query or a bad limit, before any request", async () => {
    expect((await toolbus(["tools", "search"])).code).toBe(2);
    expect((await toolbus(["tools", "search", "x", "--limit", "51"])).code).toBe(2);
  });
});
