import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type CompleteRequest,
  ErrorCode,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Failure } from "@toolbus/wire/model/call";
import type { SecretHeader } from "@toolbus/wire/model/implementation";
import { OutboundError } from "../outbound/errors";
import { failureFromOutbound, failureFromStatus } from "../outbound/failures";
import type { HttpClient, OutboundResponse, SecretSource } from "../outbound/types";
import { ToolFailure } from "../tool-definition";
import { RemoteRefusal } from "./remote-refusal";
import { authHeaders } from "./secrets";

/** A tool as a remote MCP server lists it. */
export type RemoteTool = Tool;

export interface McpConnection {
  url: string;
  /** Headers sent with every request (the auth header, value already read). */
  headers: Record<string, string>;
  http: HttpClient;
  /** For messages: which server this is, e.g. "toolset weather (mcp.example.com)". */
  upstream: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * The connection to a registered MCP server, built the same way wherever Toolbus talks to
 * one (a tool's call, discovery at registration, the federated prompts and resources): the
 * outbound client (SSRF guard, size caps), and the auth header read from its secret now.
 * `owner` names the tool or toolset in a refusal about the secret.
 */
export function mcpConnection(
  server: { url: string; auth?: SecretHeader | undefined },
  access: { secret: SecretSource; http: HttpClient },
  options: { owner: string; upstream?: string; timeoutMs: number; signal?: AbortSignal },
): McpConnection {
  return {
    url: server.url,
    headers: authHeaders(server.auth, access.secret, options.owner),
    http: access.http,
    upstream: options.upstream ?? `${options.owner} (${hostOf(server.url)})`,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** Host of a URL for messages: never its path or query, which may hold tokens. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the URL";
  }
}

const CLIENT_INFO = { name: "toolbus", version: "1" };
/**
 * The SDK checks structured results against the output schemas a listing gave. Its default
 * checker is Ajv, which the bundles leave out (see `stacks/bundling.ts`): cfworker's is the
 * one our own schema checks use.
 */
const CLIENT_OPTIONS = { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() };
const MAX_PAGES = 20;

/**
 * Runs `work` in one MCP session and closes it. Every byte goes through the outbound client
 * (SSRF guard per hop, timeouts, size caps); HTTP and transport failures come out as the tool
 * failure an agent can act on, so callers only handle ToolFailure.
 */
async function withSession<T>(
  connection: McpConnection,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  const seen: { response?: OutboundResponse; error?: unknown } = {};
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    fetch: outboundFetch(connection, seen),
    requestInit: { headers: connection.headers },
  });
  const client = new Client(CLIENT_INFO, CLIENT_OPTIONS);
  const options = {
    timeout: connection.timeoutMs,
    ...(connection.signal ? { signal: connection.signal } : {}),
  };
  try {
    await client.connect(transport, options);
    return await work(client);
  } catch (error) {
    if (error instanceof RemoteRefusal) throw error;
    throw asToolFailure(error, seen, connection.upstream);
  } finally {
    // Stateful servers keep a session per initialize: end ours (best effort), then close.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

/** Every tool the server lists (following cursors), at most `limit` + 1 to detect overflow. */
export async function listRemoteTools(
  connection: McpConnection,
  limit: number,
): Promise<RemoteTool[]> {
  return withSession(connection, async (client) => {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await client.listTools(cursor ? { cursor } : {}, {
        timeout: connection.timeoutMs,
      });
      tools.push(...answer.tools);
      cursor = answer.nextCursor;
      if (!cursor || tools.length > limit) break;
    }
    return tools;
  });
}

/**
 * `tools/call` on the server. With `onProgress`, the request asks for progress (the SDK sends a
 * progress token) and the server's progress notifications for it are handed over as they are
 * read; each one also restarts the request's timeout (the tool's own timeout still bounds the
 * call through `signal`).
 */
export async function callRemoteTool(
  connection: McpConnection,
  name: string,
  input: unknown,
  onProgress?: (progress: number, total?: number, message?: string) => void,
): Promise<CallToolResult> {
  return withSession(connection, async (client) => {
    const result = await client.callTool(
      { name, arguments: (input ?? {}) as Record<string, unknown> },
      undefined,
      {
        timeout: connection.timeoutMs,
        ...(connection.signal ? { signal: connection.signal } : {}),
        ...(onProgress
          ? {
              onprogress: (step: { progress: number; total?: number; message?: string }) =>
                onProgress(step.progress, step.total, step.message),
              resetTimeoutOnProgress: true,
            }
          : {}),
      },
    );
    return result as CallToolResult;
  });
}

/** What a remote server offers besides tools, as its `initialize` declared and its lists gave. */
export interface RemoteOfferings {
  capabilities: { prompts: boolean; resources: boolean; completions: boolean };
  prompts: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  resourceTemplates: Record<string, unknown>[];
  /** A list that had more than `limit` entries or pages than MAX_PAGES: cut there. */
  truncated: boolean;
}

/**
 * The prompts, resources and resource templates a server lists, in one session, asking only
 * for what its `initialize` capabilities declare (none of them is not an error: empty lists).
 * Each list follows cursors up to MAX_PAGES pages and keeps at most `limit` entries.
 */
export async function listRemoteOfferings(
  connection: McpConnection,
  limit: number,
): Promise<RemoteOfferings> {
  return withSession(connection, async (client) => {
    const declared = client.getServerCapabilities() ?? {};
    const capabilities = {
      prompts: declared.prompts !== undefined,
      resources: declared.resources !== undefined,
      completions: declared.completions !== undefined,
    };
    let truncated = false;
    const all = async <T>(
      page: (
        cursor: string | undefined,
      ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
    ): Promise<T[]> => {
      const items: T[] = [];
      let cursor: string | undefined;
      for (let count = 0; count < MAX_PAGES; count++) {
        const answer = await page(cursor);
        items.push(...answer.items);
        cursor = answer.nextCursor;
        if (!cursor) break;
        if (items.length >= limit || count === MAX_PAGES - 1) {
          truncated = true;
          break;
        }
      }
      if (items.length > limit) truncated = true;
      return items.slice(0, limit);
    };
    const options = { timeout: connection.timeoutMs };
    const params = (cursor: string | undefined) => (cursor ? { cursor } : {});
    const prompts = capabilities.prompts
      ? await all(async (cursor) => {
          const answer = await client.listPrompts(params(cursor), options);
          return { items: answer.prompts, nextCursor: answer.nextCursor };
        })
      : [];
    const resources = capabilities.resources
      ? await all(async (cursor) => {
          const answer = await client.listResources(params(cursor), options);
          return { items: answer.resources, nextCursor: answer.nextCursor };
        })
      : [];
    // Templates are optional to a server with resources: one that does not know the method
    // has none.
    const resourceTemplates = capabilities.resources
      ? await all(async (cursor) => {
          const answer = await client.listResourceTemplates(params(cursor), options);
          return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
        }).catch((error: unknown) => {
          if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) return [];
          throw error;
        })
      : [];
    return { capabilities, prompts, resources, resourceTemplates, truncated };
  });
}

/** `resources/read` on the server, its result as sent. */
export async function readRemoteResource(
  connection: McpConnection,
  uri: string,
): Promise<Record<string, unknown>> {
  return withSession(connection, (client) =>
    refusedAs(connection, client.readResource({ uri }, requestOptions(connection))),
  );
}

/** `prompts/get` on the server, its result as sent. */
export async function getRemotePrompt(
  connection: McpConnection,
  name: string,
  args: Record<string, string> | undefined,
): Promise<Record<string, unknown>> {
  return withSession(connection, (client) =>
    refusedAs(
      connection,
      client.getPrompt(
        { name, ...(args === undefined ? {} : { arguments: args }) },
        requestOptions(connection),
      ),
    ),
  );
}

/** `completion/complete` on the server, its result as sent. */
export async function completeRemote(
  connection: McpConnection,
  params: CompleteRequest["params"],
): Promise<Record<string, unknown>> {
  return withSession(connection, (client) =>
    refusedAs(connection, client.complete(params, requestOptions(connection))),
  );
}

/** A JSON-RPC error the server answered (not a timeout) as a RemoteRefusal, with its code. */
async function refusedAs<T>(connection: McpConnection, answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (
      error instanceof McpError &&
      error.code !== ErrorCode.RequestTimeout &&
      error.code !== ErrorCode.ConnectionClosed
    ) {
      throw new RemoteRefusal(error.code, error.message, connection.upstream);
    }
    throw error;
  }
}

function requestOptions(connection: McpConnection) {
  return {
    timeout: connection.timeoutMs,
    ...(connection.signal ? { signal: connection.signal } : {}),
  };
}

/**
 * The SDK's fetch, served by the outbound client. GET (the optional server-to-client event
 * stream) answers 405 without a request: Toolbus only makes request/response exchanges, and
 * an open stream would hold the call until its timeout.
 */
function outboundFetch(
  connection: McpConnection,
  seen: { response?: OutboundResponse; error?: unknown },
): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "POST" && method !== "DELETE") return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    let response: OutboundResponse;
    try {
      response = await connection.http.request(String(url), {
        method,
        headers,
        ...(typeof init?.body === "string" ? { body: init.body } : {}),
        timeoutMs: connection.timeoutMs,
        retries: 0,
        ...(connection.signal ? { signal: connection.signal } : {}),
      });
    } catch (error) {
      if (method === "POST") seen.error = error;
      throw error;
    }
    if (response.status >= 400 && method === "POST") seen.response = response;
    const headersOut = new Headers(response.headers);
    // The outbound client has already decoded the body.
    headersOut.delete("content-encoding");
    headersOut.delete("content-length");
    const empty = response.body.byteLength === 0 || [204, 205, 304].includes(response.status);
    return new Response(empty ? null : response.body, {
      status: response.status,
      headers: headersOut,
    });
  };
}

function asToolFailure(
  error: unknown,
  seen: { response?: OutboundResponse; error?: unknown },
  upstream: string,
): ToolFailure {
  if (error instanceof ToolFailure) return error;
  if (seen.error instanceof OutboundError) return failureFromOutbound(seen.error, upstream);
  if (seen.response) {
    const byStatus = failureFromStatus(seen.response, upstream);
    if (byStatus) return byStatus;
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return fail("timeout", `${upstream} did not answer in time.`, true, "replan");
    }
    if (error.code === ErrorCode.InvalidParams) {
      return fail(
        "upstream_error",
        `${upstream} refused the call: ${error.message}`,
        false,
        "correct_call",
      );
    }
    return fail(
      "upstream_error",
      `${upstream} answered with an error: ${error.message}`,
      false,
      "replan",
    );
  }
  return fail(
    "upstream_error",
    `${upstream} did not answer as an MCP server: ${(error as Error)?.message ?? String(error)}`,
    false,
    "replan",
  );
}

function fail(
  kind: Failure["kind"],
  message: string,
  retryable: boolean,
  recovery: Failure["recovery"],
): ToolFailure {
  return new ToolFailure({ kind, message: message.slice(0, 1000), retryable, recovery });
}
