import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { secretCapability } from "@toolbus/core";
import { connectionSecret } from "@toolbus/core/connections/credentials";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kangarooTool } from "./support/kangaroo-tools";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * `explain` on /v1/tools/search: why each result was found, and for an administrator only the
 * matching tools selection leaves out, with its reasons in words. Without `explain` the answer
 * is exactly what it was.
 */

const toolset: ToolsetSpec = {
  name: "explain_kit",
  description: "Marsupial tools, for explanation tests.",
  owner: "explain-tests",
  kind: "builtin",
};

const kitTool = (id: string, title: string, spec: Record<string, unknown> = {}) =>
  kangarooTool(toolset.name, id, title, spec);

const tools = [
  kitTool("roo_open", "Open kangaroo counter"),
  kitTool("roo_list_surveys", "Survey lister", {
    description: "Lists each directory of a survey.",
  }),
  kitTool("roo_review", "Review kangaroo counter", { availability: { modes: ["review"] } }),
  kitTool("roo_admin", "Admin kangaroo counter", { availability: { minRole: "admin" } }),
  kitTool("roo_secret", "Secret kangaroo counter", { requires: ["roo_secret_key"] }),
  kitTool("roo_off", "Disabled kangaroo counter", { availability: { enabled: false } }),
  kitTool("roo_github", "Github kangaroo counter", {
    credentials: {
      provider: "github",
      scopes: ["repo"],
      mode: "user",
      secret: connectionSecret("github"),
    },
  }),
];
const HIDDEN_FROM_VIEWER = ["roo_review", "roo_admin", "roo_secret", "roo_off"];

interface Word {
  word: string;
  fields: string[];
  as?: string[];
}
interface Found {
  query: string;
  mode: string;
  role: string;
  catalogVersion: string;
  tools: Array<{
    id: string;
    score: number;
    matched: string[];
    explanation?: {
      words: Word[];
      notes: string[];
      action?: { asked: string; does: string; weight: number };
    };
  }>;
  excluded?: Array<{
    id: string;
    score: number;
    matched: string[];
    words: Word[];
    reasons: string[];
    why: string;
  }>;
}

let system: TestToolbus;
let api: ApiServer;
let viewerKey: string;
let keyDir: string;
const previousKeyFile = process.env.TOOLBUS_CONNECTION_KEY_FILE;

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), "toolbus-explain-"));
  process.env.TOOLBUS_CONNECTION_KEY_FILE = join(keyDir, "connection-key");
  system = await startTestToolbus({
    config: {
      modes: { default: "draft", available: ["draft", "review"] },
      connections: {
        publicUrl: "https://toolbus.example.com",
        providers: { github: { clientId: "Iv1.toolbus", clientSecret: "GITHUB_OAUTH_SECRET" } },
      },
    },
    tools: [...builtinTools, ...tools],
    toolsets: [...builtinToolsets, toolset],
    capabilities: [secretCapability("roo_secret_key", "ROO_SECRET", "A secret no test sets.")],
    secrets: { GITHUB_OAUTH_SECRET: "s3cret" },
  });
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "explain-viewer", role: "viewer" },
  });
  expect(response.status).toBe(201);
  viewerKey = ((await response.json()) as { key: string }).key;
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  if (previousKeyFile === undefined) delete process.env.TOOLBUS_CONNECTION_KEY_FILE;
  else process.env.TOOLBUS_CONNECTION_KEY_FILE = previousKeyFile;
  if (keyDir) await rm(keyDir, { recursive: true, force: true });
}, 60_000);

async function search(query: Record<string, string>, key?: string): Promise<Found> {
  const response = await system.request(`/v1/tools/search?${new URLSearchParams(query)}`, {
    ...(key ? { key } : {}),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Found;
}

async function post(json: Record<string, unknown>, key?: string): Promise<Found> {
  const response = await system.request("/v1/tools/search", {
    method: "POST",
    json,
    ...(key ? { key } : {}),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Found;
}

const ids = (found: { tools: { id: string }[] }) => found.tools.map((tool) => tool.id);
const without = (found: Found) => ({
  ...found,
  tools: found.tools.map(({ explanation: _e, ...tool }) => tool),
});

describe("a search without explain", () => {
  it("answers exactly as before: no explanation, no excluded tools", async () => {
    const plain = await search({ q: "kangaroo counter", limit: "50" });
    expect(Object.keys(plain)).toEqual(["query", "mode", "role", "catalogVersion", "tools"]);
    expect(plain.tools.length).toBeGreaterThan(0);
    for (const tool of plain.tools) {
      expect(Object.keys(tool).sort()).toEqual(
        [
          "category",
          "description",
          "id",
          "inputSchema",
          "matched",
          "score",
          "title",
          "toolset",
          "usageHint",
        ].sort(),
      );
    }
    expect(await search({ q: "kangaroo counter", limit: "50", explain: "false" })).toEqual(plain);
    expect(await post({ q: "kangaroo counter", limit: 50, explain: false })).toEqual(plain);
  });

  it("refuses an explain that is not true or false", async () => {
    const response = await system.request("/v1/tools/search?q=kangaroo&explain=yes");
    expect(response.status).toBe(400);
    const body = await system.request("/v1/tools/search", {
      method: "POST",
      json: { q: "kangaroo", explain: "true" },
    });
    expect(body.status).toBe(400);
  });
});

describe("a search with explain", () => {
  it("says which words of the query each result matched, and where", async () => {
    const plain = await search({ q: "kangaroo counter zebra", limit: "50" });
    const explained = await search({ q: "kangaroo counter zebra", limit: "50", explain: "true" });
    // The same tools, scores and order: explaining ranks nothing differently.
    expect(without(explained)).toEqual({ ...plain, excluded: explained.excluded });
    const open = explained.tools.find((tool) => tool.id === "roo_open");
    expect(open?.explanation?.words).toEqual([
      { word: "kangaroo", fields: expect.arrayContaining(["title", "description", "usageHint"]) },
      {
        word: "counter",
        fields: expect.arrayContaining(["title", "description", "usageHint"]),
        // The usage hint says "counting", not "counter": met there only as the word WordNet
        // relates to it (count), and said so; where "counter" itself is, nothing more is said.
        as: ["counting"],
      },
    ]);
    // A word found nowhere is not claimed, and every field named is one the index matched.
    expect(open?.explanation?.words.map((word) => word.word)).not.toContain("zebra");
    for (const tool of explained.tools) {
      const claimed = new Set(tool.explanation?.words.flatMap((word) => word.fields));
      for (const field of claimed) expect(tool.matched).toContain(field);
    }
  });

  it("meets a typo and another form of a word as the index does, under the word as written", async () => {
    const found = await search({ q: "kangaroos countr", explain: "true", limit: "50" });
    const open = found.tools.find((tool) => tool.id === "roo_open");
    const words = open?.explanation?.words ?? [];
    expect(words.map((word) => word.word)).toEqual(["kangaroos", "countr"]);
    expect(words[0]?.fields).toEqual(expect.arrayContaining(["title", "description"]));
    expect(words[1]?.fields.length).toBeGreaterThan(0);
    // Met as the tool's own word, one typo away.
    expect(words[1]?.as).toContain("counter");
    expect(words[0]?.as).toBeUndefined();
  });

  it("says which of the tool's words a word was met as when the tool calls it otherwise", async () => {
    const found = await search({ q: "folder survey", explain: "true" });
    const lister = found.tools.find((tool) => tool.id === "roo_list_surveys");
    expect(lister?.explanation?.words).toEqual([
      { word: "folder", fields: ["description"], as: ["directory"] },
      { word: "survey", fields: expect.arrayContaining(["title", "description"]) },
    ]);
  });

  it("says what the query asks to do beside what a tool's name says it does", async () => {
    const found = await search({ q: "list every kangaroo survey", explain: "true", limit: "50" });
    const byId = new Map(found.tools.map((tool) => [tool.id, tool]));
    // "list" in the query's first words and in roo_list_surveys's name.
    expect(byId.get("roo_list_surveys")?.explanation?.action).toEqual({
      asked: "list",
      does: "list",
      weight: 1.2,
    });
    // roo_admin's name states no action: nothing is said, and nothing was weighed.
    expect(byId.has("roo_admin")).toBe(true);
    expect(byId.get("roo_admin")?.explanation?.action).toBeUndefined();
  });

  it("notes a tool that needs the caller's own connection", async () => {
    const found = await search({ q: "github kangaroo counter", explain: "true" }, viewerKey);
    const github = found.tools.find((tool) => tool.id === "roo_github");
    expect(github?.explanation?.notes).toEqual(["needs your github connection"]);
    const open = found.tools.find((tool) => tool.id === "roo_open");
    expect(open?.explanation?.notes).toEqual([]);
  });

  it("lists an administrator the matching tools selection left out, with its reasons in words", async () => {
    const found = await search({ q: "kangaroo counter", explain: "true", limit: "50" });
    const excluded = new Map((found.excluded ?? []).map((entry) => [entry.id, entry]));
    expect(excluded.get("roo_off")).toMatchObject({
      reasons: ["disabled"],
      why: "roo_off: disabled",
    });
    expect(excluded.get("roo_secret")).toMatchObject({
      reasons: ["capability:roo_secret_key"],
      why: "roo_secret: needs roo_secret_key",
    });
    expect(excluded.get("roo_review")?.why).toBe(
      "roo_review: not offered in mode draft (only in review)",
    );
    expect(excluded.get("roo_review")?.words.map((word) => word.word)).toEqual([
      "kangaroo",
      "counter",
    ]);
    // Offered tools are results, never excluded ones; the admin's own role sees roo_admin.
    for (const id of ids(found)) expect(excluded.has(id)).toBe(false);
    expect(ids(found)).toContain("roo_admin");
    expect(excluded.has("roo_admin")).toBe(false);
    // What does not match the query is not listed, however it is left out.
    expect(excluded.has("calendar")).toBe(false);

    // Selecting for a lower role: what that role may not use, said so.
    const asViewer = await search({ q: "kangaroo counter", explain: "true", role: "viewer" });
    const admin = asViewer.excluded?.find((entry) => entry.id === "roo_admin");
    expect(admin?.why).toBe("roo_admin: needs the admin role");
    expect(ids(asViewer)).not.toContain("roo_admin");

    // A built-in that lacks its capability: the example.
    const calendar = await search({ q: "calendar events", explain: "true", limit: "10" });
    const entry = calendar.excluded?.find((candidate) => candidate.id === "calendar");
    expect(entry?.reasons).toContain("capability:google_calendar");
    expect(entry?.why).toMatch(/^calendar: (.*; )?needs google_calendar(;|$)/);
    expect(ids(calendar)).not.toContain("calendar");
  });

  it("says so when the request itself leaves a tool out (POST allow / deny)", async () => {
    const found = await post({
      q: "kangaroo counter",
      explain: true,
      limit: 50,
      deny: ["roo_open"],
      allow: ["roo_open", "roo_admin", "roo_github"],
    });
    expect(
      ids(found)
        .filter((id) => id.startsWith("roo_"))
        .sort(),
    ).toEqual(["roo_admin", "roo_github"]);
    const excluded = new Map((found.excluded ?? []).map((entry) => [entry.id, entry.why]));
    expect(excluded.get("roo_open")).toBe("roo_open: denied by the request");
    expect(excluded.get("roo_secret")).toBe(
      "roo_secret: needs roo_secret_key; not in the request's allow list",
    );
  });

  it("never tells a caller without the admin permission of a tool it may not see", async () => {
    const plain = await search({ q: "kangaroo counter", limit: "50" }, viewerKey);
    const explained = await search(
      { q: "kangaroo counter", limit: "50", explain: "true" },
      viewerKey,
    );
    expect(explained.excluded).toBeUndefined();
    expect(Object.keys(explained)).toEqual(["query", "mode", "role", "catalogVersion", "tools"]);
    expect(without(explained)).toEqual(plain);
    const text = JSON.stringify(explained);
    for (const id of HIDDEN_FROM_VIEWER) expect(text).not.toContain(id);
    // Not through a POST either, nor for a tool denied by the request itself.
    const posted = await post(
      { q: "kangaroo counter", explain: true, limit: 50, deny: ["roo_open"] },
      viewerKey,
    );
    expect(posted.excluded).toBeUndefined();
    for (const id of HIDDEN_FROM_VIEWER) expect(JSON.stringify(posted)).not.toContain(id);
  });
});

describe("search_tools on the MCP search surface", () => {
  async function searchTools(key: string, args: Record<string, unknown>) {
    const client = new Client({ name: "toolbus-explain-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp?surface=search`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: "search_tools",
        arguments: args,
      })) as CallToolResult;
      expect(result.isError).toBe(false);
      return result.structuredContent as Pick<Found, "tools" | "excluded">;
    } finally {
      await client.close();
    }
  }

  it("explains when asked, lists what was left out to administrators only, and is unchanged otherwise", async () => {
    const plain = await searchTools(system.adminKey, { query: "kangaroo counter", limit: 50 });
    expect(Object.keys(plain)).toEqual(["tools"]);
    expect(plain.tools.every((tool) => tool.explanation === undefined)).toBe(true);

    const admin = await searchTools(system.adminKey, {
      query: "kangaroo counter",
      limit: 50,
      explain: true,
    });
    expect(admin.tools.find((tool) => tool.id === "roo_open")?.explanation?.words).toEqual([
      { word: "kangaroo", fields: expect.arrayContaining(["title"]) },
      { word: "counter", fields: expect.arrayContaining(["title"]), as: ["counting"] },
    ]);
    expect(admin.excluded?.find((entry) => entry.id === "roo_off")?.why).toBe("roo_off: disabled");

    const viewer = await searchTools(viewerKey, { query: "kangaroo counter", explain: true });
    expect(viewer.excluded).toBeUndefined();
    for (const id of HIDDEN_FROM_VIEWER) expect(JSON.stringify(viewer)).not.toContain(id);
  });
});
