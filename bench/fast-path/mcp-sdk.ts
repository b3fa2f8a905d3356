import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Answer, mcpProblem, type Target, TEXT } from "./clients";

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** What the bench uses of either generation's client. */
interface OfficialClient {
  listTools(): Promise<unknown>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * `tools/call` through an official MCP SDK client over Streamable HTTP, as agents call MCP
 * servers: one client, connected once (what it negotiates, it negotiates once), the tool's
 * output schema listed once as a client does before calling, then every call a `callTool`
 * that the client checks against it. The run id goes in X-Toolbus-Run-Id, set per phase.
 */
async function officialClientTarget(
  name: string,
  headers: Record<string, string>,
  connect: (fetch: Fetch) => Promise<OfficialClient>,
): Promise<Target & { close(): Promise<void> }> {
  let runId = "";
  const client = await connect((input, init) => {
    const sent = new Headers(init?.headers);
    for (const [key, value] of Object.entries(headers)) sent.set(key, value);
    if (runId) sent.set("x-toolbus-run-id", runId);
    return fetch(input, { ...init, headers: sent });
  });
  await client.listTools();
  return {
    name,
    async send(phaseRunId): Promise<Answer> {
      runId = phaseRunId;
      const result = await client.callTool({
        name: "readability_analyzer",
        arguments: { text: TEXT },
      });
      return { status: 200, body: { result } };
    },
    problem: mcpProblem,
    close: () => client.close(),
  };
}

/** The first-generation client (`@modelcontextprotocol/sdk`), on 2025-11-25. */
export function mcpSdkTarget(name: string, url: string, headers: Record<string, string> = {}) {
  return officialClientTarget(name, headers, async (fetch) => {
    const client = new Client({ name: "toolbus-bench", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }));
    return client;
  });
}

/**
 * The second-generation client (`@modelcontextprotocol/client`), which negotiates the current
 * revision (2026-07-28: no session, each request carrying its own envelope).
 */
export function mcpSdkV2Target(name: string, url: string, headers: Record<string, string> = {}) {
  return officialClientTarget(name, headers, async (fetch) => {
    // Its default still speaks 2025-11-25; `auto` offers the current revision first.
    const client = new ClientV2(
      { name: "toolbus-bench", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await client.connect(new TransportV2(new URL(url), { fetch }));
    return client;
  });
}
