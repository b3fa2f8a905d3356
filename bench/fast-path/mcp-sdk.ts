import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Answer, mcpProblem, type Target, TEXT } from "./clients";

/**
 * `tools/call` through the official MCP SDK client over Streamable HTTP, as agents call MCP
 * servers: one client, initialized once (its session and protocol version negotiated), every
 * call a `callTool` that the client checks against the tool's output schema. The run id goes in
 * X-Toolbus-Run-Id, set per phase.
 */
export async function mcpSdkTarget(
  name: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Target & { close(): Promise<void> }> {
  let runId = "";
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (input, init) => {
      const sent = new Headers(init?.headers);
      for (const [key, value] of Object.entries(headers)) sent.set(key, value);
      if (runId) sent.set("x-toolbus-run-id", runId);
      return fetch(input, { ...init, headers: sent });
    },
  });
  const client = new Client({ name: "toolbus-bench", version: "1.0.0" });
  await client.connect(transport);
  // The tool's output schema is read once, as a client does before calling it.
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

/**
 * The same through the official second-generation client (`@modelcontextprotocol/client`),
 * which negotiates the current revision (2026-07-28: no session, each request carrying its
 * own envelope), as agents built on the current SDK call MCP servers.
 */
export async function mcpSdkV2Target(
  name: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<Target & { close(): Promise<void> }> {
  let runId = "";
  const transport = new TransportV2(new URL(url), {
    fetch: (input, init) => {
      const sent = new Headers(init?.headers);
      for (const [key, value] of Object.entries(headers)) sent.set(key, value);
      if (runId) sent.set("x-toolbus-run-id", runId);
      return fetch(input, { ...init, headers: sent });
    },
  });
  const client = new ClientV2({ name: "toolbus-bench", version: "1.0.0" });
  await client.connect(transport);
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
