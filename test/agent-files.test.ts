import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Environment,
  type HarnessConnection,
  HarnessRefusal,
  readClaudeCode,
  readCopilot,
  readOpencode,
} from "./support/harness-readers";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// An agent file rendered with the catalog enricher, written into a project the way a user
// would, read back the way each harness reads it, and used by the official MCP client
// against a real Toolbus over HTTP: the file works as written, and one session is one run.

interface RenderedFile {
  harness: string;
  path: string;
  content: string;
  warnings: string[];
  mcpServersFile?: { path: string; key: string; content: string };
}

type Reader = (
  root: string,
  agent: string,
  server: string,
  env: Environment,
) => Promise<HarnessConnection>;

const HARNESS_READERS: Record<string, Reader> = {
  "claude-code": readClaudeCode,
  opencode: readOpencode,
  copilot: readCopilot,
};

const AGENT = {
  name: "editor",
  description: "Edits prose",
  prompt: "Edit the text.",
  tools: ["Read"],
};

let system: TestToolbus;
let api: ApiServer;
let memberKey: string;
let project: string;

beforeAll(async () => {
  system = await startTestToolbus();
  api = await serveApi(system.app, { port: 0 });
  const created = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "agent-files", role: "member" },
  });
  expect(created.status).toBe(201);
  memberKey = ((await created.json()) as { key: string }).key;
  project = await mkdtemp(join(tmpdir(), "toolbus-agent-files-"));
  // Over real HTTP, so the MCP URL in the files is the one this server derives for itself.
  const response = await fetch(`${api.url}/v1/agents/render`, {
    method: "POST",
    headers: { authorization: `Bearer ${memberKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      harness: "all",
      agent: AGENT,
      enrichers: [{ type: "addToolbusCatalog" }],
    }),
  });
  expect(response.status).toBe(200);
  const { files } = (await response.json()) as { files: RenderedFile[] };
  for (const file of files) {
    await writeProjectFile(file.path, file.content);
    if (file.mcpServersFile) {
      await writeProjectFile(file.mcpServersFile.path, file.mcpServersFile.content);
    }
  }
});
afterAll(async () => {
  await api?.close();
  await system?.stop();
  if (project) await rm(project, { recursive: true, force: true });
});

async function writeProjectFile(path: string, content: string): Promise<void> {
  const target = join(project, path);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, content);
}

/** The environment a user exports before starting the harness, under each harness's names. */
function sessionEnvironment(runId: string | undefined): Environment {
  return {
    TOOLBUS_API_KEY: memberKey,
    TOOLBUS_RUN_ID: runId,
    COPILOT_MCP_TOOLBUS_API_KEY: memberKey,
    COPILOT_MCP_TOOLBUS_RUN_ID: runId,
  };
}

async function connect(connection: HarnessConnection): Promise<Client> {
  const client = new Client({ name: "harness-session", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    requestInit: { headers: connection.headers },
  });
  await client.connect(transport);
  return client;
}

async function analyze(client: Client, text: string): Promise<CallToolResult> {
  const result = (await client.callTool({
    name: "readability_analyzer",
    arguments: { text },
  })) as CallToolResult;
  expect(result.isError).toBe(false);
  return result;
}

function runOf(result: CallToolResult): unknown {
  return result._meta?.["toolbus/runId"];
}

describe.each(Object.keys(HARNESS_READERS))(
  "the %s files rendered with the catalog enricher",
  (harness) => {
    const read = (env: Environment) =>
      (HARNESS_READERS[harness] as Reader)(project, AGENT.name, "toolbus", env);

    it("connect with the key from the environment and keep a session's calls in one run", async () => {
      const runId = system.runId();
      const connection = await read(sessionEnvironment(runId));
      expect(connection.url).toBe(`${api.url}/mcp`);
      expect(connection.tools).toContain("readability_analyzer");

      const client = await connect(connection);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(connection.tools));
        const first = await analyze(client, "The cat sat on the mat.");
        const second = await analyze(client, "It was a happy cat. It purred.");
        expect([runOf(first), runOf(second)]).toEqual([runId, runId]);
        const callIds = [first, second].map((result) => result._meta?.["toolbus/callId"]);

        const events = await system.events<{ detailType: string; detail: { callId: string } }>(
          runId,
        );
        const results = events.filter((event) => event.detailType === "ToolResultReceived");
        expect(results.map((event) => event.detail.callId).sort()).toEqual([...callIds].sort());
      } finally {
        await client.close();
      }
    });

    it("still connect when no run id is set, each request then in a run of its own", async () => {
      const client = await connect(await read(sessionEnvironment(undefined)));
      try {
        const first = await analyze(client, "Short text.");
        const second = await analyze(client, "Another short text.");
        expect(runOf(first)).toMatch(/^mcp-/);
        expect(runOf(second)).toMatch(/^mcp-/);
        expect(runOf(first)).not.toBe(runOf(second));
      } finally {
        await client.close();
      }
    });
  },
);

describe("without the API key in the environment", () => {
  it("Claude Code does not load the server, as for any required variable", async () => {
    await expect(
      readClaudeCode(project, AGENT.name, "toolbus", { TOOLBUS_RUN_ID: "r" }),
    ).rejects.toBeInstanceOf(HarnessRefusal);
  });

  it("OpenCode and Copilot send an empty key, which Toolbus answers with 401", async () => {
    for (const read of [readOpencode, readCopilot]) {
      const connection = await read(project, AGENT.name, "toolbus", {});
      const response = await fetch(connection.url, {
        method: "POST",
        headers: {
          ...connection.headers,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
    }
  });
});
