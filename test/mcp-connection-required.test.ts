import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type CallToolResult,
  ElicitRequestSchema,
  ErrorCode,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError } from "@modelcontextprotocol/server";
import { defineTool, ToolFailure } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { type CallRecord, callRecord, type Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import { toolSpec } from "@toolbus/wire/model/tool";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { highestRole } from "../packages/core/src/app/access";
import {
  connectElicitationId,
  connectionRequiredAnswer,
  connectKey,
} from "../packages/http/src/mcp/connection-required";
import { legacyCapabilities } from "../packages/http/src/mcp/relayed-call";
import { callToolResult } from "../packages/http/src/mcp/results";
import { createMcpServer, type McpRequestContext } from "../packages/http/src/mcp/server";
import { mintSessionId, readSessionId } from "../packages/http/src/mcp/session-id";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * A call that fails for want of a connected account (`connection_required`) over /mcp: a
 * caller that takes URL-mode elicitation is sent to the connect link (2026-07-28: an
 * `input_required` result; 2025-11-25: the -32042 error), and its retry runs the tool again
 * as a new call; any other caller gets the failed result, which says where to connect. The
 * tool is a real one, failing as the connections will make tools fail, in a real Toolbus.
 */

const MODERN = "2026-07-28";
const CONNECT = "https://toolbus.example.com/connect/github";
const MESSAGE = "test_acts_as_you acts as you on GitHub, and your GitHub account is not connected.";
const TOOL = "test_acts_as_you";

/** The accounts a person connected (by opening the link, which names the account here). */
const connected = new Set<string>();
const linkFor = (account: string) => `${CONNECT}?ticket=${account}`;

const actsAsYou = defineTool({
  spec: {
    id: TOOL,
    toolset: "test_connections",
    title: "Acts as you",
    description: "Reads your GitHub account.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ account: z.string(), noLink: z.boolean().optional() }),
  output: z.object({ account: z.string() }),
  async execute({ account, noLink }) {
    if (!connected.has(account)) {
      throw new ToolFailure(
        Failures.connectionRequired(MESSAGE, {
          provider: "github",
          scopes: ["repo"],
          reason: "not_connected",
          ...(noLink ? {} : { connectUrl: linkFor(account) }),
        }),
      );
    }
    return { output: `connected as ${account}`, data: { account } };
  },
});

let system: TestToolbus;
let api: ApiServer;
let accounts = 0;
const account = () => `acct-${++accounts}-${Date.now()}`;

beforeAll(async () => {
  system = await startTestToolbus({
    tools: [actsAsYou],
    toolsets: [
      { name: "test_connections", description: "Test tools", owner: "tests", kind: "builtin" },
    ],
  });
  api = await serveApi(system.app, { port: 0 });
});

afterAll(async () => {
  await api?.close();
  await system?.stop();
});

const mcpUrl = () => new URL(`${api.url}/mcp`);
const auth = (runId?: string) => ({
  Authorization: `Bearer ${system.adminKey}`,
  ...(runId ? { "X-Toolbus-Run-Id": runId } : {}),
});

const textOf = (result: unknown) =>
  ((result as { content?: Array<{ type: string; text?: string }> }).content ?? [])
    .map((block) => block.text ?? "")
    .join("");

/** What the connect link names: the account the person connects by opening it. */
function openLink(url: string): void {
  const ticket = new URL(url).searchParams.get("ticket");
  if (ticket) connected.add(ticket);
}

/** The calls of a run, in order: their ids and how each ended. */
async function callsOf(runId: string) {
  const events = await system.events<{ detailType: string; detail: Record<string, unknown> }>(
    runId,
  );
  return events
    .filter((event) => event.detailType === "ToolResultReceived")
    .map((event) => ({
      callId: event.detail.callId as string,
      status: event.detail.status,
      kind: (event.detail.failure as { kind?: string } | undefined)?.kind,
    }));
}

/** The failure a connection_required call of `account` carries. */
function failureOf(acct: string, link = true): Failure {
  return {
    kind: "connection_required",
    message: MESSAGE,
    retryable: false,
    recovery: "replan",
    connection: {
      provider: "github",
      scopes: ["repo"],
      reason: "not_connected",
      ...(link ? { connectUrl: linkFor(acct) } : {}),
    },
  };
}

/** The official 2026-07-28 client, with the capabilities given, sending its person's choice. */
async function modernClient(
  capabilities: Record<string, unknown>,
  asked: unknown[],
  runId?: string,
): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "connection-test", version: "2" },
    { capabilities, versionNegotiation: { mode: { pin: MODERN } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(request.params);
    const params = request.params as { mode?: string; url?: string };
    if (params.mode === "url" && params.url) openLink(params.url);
    return { action: "accept" as const };
  });
  await client.connect(new TransportV2(mcpUrl(), { requestInit: { headers: auth(runId) } }));
  return client;
}

/** A raw 2026-07-28 request, with the client capabilities given in its envelope. */
async function modern(
  params: Record<string, unknown>,
  options: { capabilities?: Record<string, unknown>; headers?: Record<string, string> } = {},
) {
  const response = await system.request("/mcp", {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": params.name as string,
      ...options.headers,
    },
    json: {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
          ...((params._meta as object | undefined) ?? {}),
        },
      },
    },
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as {
    result?: Record<string, unknown>;
    error?: { code: number };
  };
  return body;
}

const URL_ELICITATION = { elicitation: { url: {} } };

describe("over 2026-07-28", () => {
  it("sends a caller that takes URL elicitation to the connect link; its retry runs the tool again as a new call", async () => {
    const acct = account();
    const runId = system.runId();
    const asked: unknown[] = [];
    const client = await modernClient(URL_ELICITATION, asked, runId);
    try {
      const result = await client.callTool({ name: TOOL, arguments: { account: acct } });
      expect(result.isError, textOf(result)).toBe(false);
      expect(result.structuredContent).toEqual({ account: acct });
      // One URL-mode elicitation, the 2026-07-28 shape: no elicitationId.
      expect(asked).toEqual([{ mode: "url", message: MESSAGE, url: linkFor(acct) }]);
    } finally {
      await client.close();
    }
    const calls = await callsOf(runId);
    expect(calls.map(({ status, kind }) => [status, kind])).toEqual([
      ["failed", "connection_required"],
      ["succeeded", undefined],
    ]);
    expect(calls[0]?.callId).not.toBe(calls[1]?.callId);
  });

  it("answers input_required with one URL-mode elicitation/create and no requestState; a retry that answered it is not asked again", async () => {
    const acct = account();
    const runId = system.runId();
    const headers = { "x-toolbus-run-id": runId };
    const first = await modern(
      { name: TOOL, arguments: { account: acct } },
      { capabilities: URL_ELICITATION, headers },
    );
    expect(first.error).toBeUndefined();
    expect(first.result).toMatchObject({
      resultType: "input_required",
      inputRequests: {
        [connectKey("github")]: {
          method: "elicitation/create",
          params: { mode: "url", message: MESSAGE, url: linkFor(acct) },
        },
      },
    });
    expect(Object.keys(first.result?.inputRequests as object)).toEqual(["toolbus/connect/github"]);
    expect(first.result).not.toHaveProperty("requestState");
    // The person said yes but never connected: the retry runs again, fails again, and the
    // failure is answered, not the same question in a loop.
    const retry = await modern(
      {
        name: TOOL,
        arguments: { account: acct },
        inputResponses: { [connectKey("github")]: { action: "accept" } },
      },
      { capabilities: URL_ELICITATION, headers },
    );
    expect(retry.result).toMatchObject({
      isError: true,
      _meta: { "toolbus/status": "failed", "toolbus/failure": failureOf(acct) },
    });
    const calls = await callsOf(runId);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.callId).not.toBe(calls[1]?.callId);
  });

  it("gives a caller that declared no URL elicitation the failed result: the connection, and where to connect", async () => {
    const acct = account();
    const asked: unknown[] = [];
    // Form mode only: a URL is never sent to it.
    const client = await modernClient({ elicitation: { form: {} } }, asked);
    try {
      const result = await client.callTool({ name: TOOL, arguments: { account: acct } });
      expect(result.isError).toBe(true);
      expect(asked).toEqual([]);
      expect(result._meta?.["toolbus/failure"]).toEqual(failureOf(acct));
      expect(textOf(result)).toBe(
        `${MESSAGE} A person connects their github account by opening ${linkFor(acct)} in a ` +
          `browser. Call ${TOOL} again with the same arguments once it is connected.`,
      );
    } finally {
      await client.close();
    }
  });

  it("never sends a caller to connect for a call it named: the same request again reaches the same failed call", async () => {
    const acct = account();
    const named = await modern(
      { name: TOOL, arguments: { account: acct }, _meta: { "toolbus/callId": `named-${acct}` } },
      { capabilities: URL_ELICITATION },
    );
    expect(named.result).toMatchObject({
      isError: true,
      _meta: { "toolbus/callId": `named-${acct}`, "toolbus/failure": failureOf(acct) },
    });
    expect(named.result).not.toHaveProperty("resultType", "input_required");
  });

  it("sends the person to connect the same way through the search surface's call_tool", async () => {
    const acct = account();
    const answered = await modern(
      { name: "call_tool", arguments: { tool: TOOL, arguments: { account: acct } } },
      { capabilities: URL_ELICITATION, headers: { "x-toolbus-surface": "search" } },
    );
    expect(answered.result).toMatchObject({
      resultType: "input_required",
      inputRequests: {
        [connectKey("github")]: {
          method: "elicitation/create",
          params: { mode: "url", url: linkFor(acct) },
        },
      },
    });
  });

  it("is given no session id, and reads none: only the request's own envelope counts", async () => {
    const client = new ClientV2(
      { name: "connection-test", version: "2" },
      { capabilities: URL_ELICITATION, versionNegotiation: { mode: { pin: MODERN } } },
    );
    const transport = new TransportV2(mcpUrl(), { requestInit: { headers: auth() } });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toBeUndefined();
    } finally {
      await client.close();
    }
    // A 2025-era session id saying URL elicitation changes nothing for a 2026-07-28 request.
    const acct = account();
    const answered = await modern(
      { name: TOOL, arguments: { account: acct } },
      { headers: { "mcp-session-id": mintSessionId(URL_ELICITATION) } },
    );
    expect(answered.error).toBeUndefined();
    expect(answered.result).toMatchObject({
      isError: true,
      _meta: { "toolbus/failure": failureOf(acct) },
    });
  });

  it("without a connect link, answers the failed result, which says how to get one", async () => {
    const acct = account();
    const asked: unknown[] = [];
    const client = await modernClient(URL_ELICITATION, asked);
    try {
      const result = await client.callTool({
        name: TOOL,
        arguments: { account: acct, noLink: true },
      });
      expect(result.isError).toBe(true);
      expect(asked).toEqual([]);
      expect(result._meta?.["toolbus/failure"]).toEqual(failureOf(acct, false));
      expect(textOf(result)).toContain("POST /v1/connections/github gives a link");
    } finally {
      await client.close();
    }
  });
});

describe("over 2025-11-25", () => {
  /** The first-generation client, answering URL elicitations by opening the link. */
  function legacyClient(capabilities: Record<string, unknown>) {
    const client = new ClientV1({ name: "connection-test", version: "1" }, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    return client;
  }

  /** Toolbus's own MCP server for 2025-11-25 on one connection: it sees the initialize. */
  async function connectedServer(client: ClientV1, runId: string) {
    const deps = system.toolbus.apiDeps;
    const context: McpRequestContext = {
      principal: { id: "admin-bootstrap", role: highestRole(deps.config) },
      mode: deps.config.modes.default,
      surface: "catalog",
      runId,
      logFailure: (error) => {
        throw error;
      },
    };
    // What the route hands every server (route.ts), from the same services.
    const { config, catalog, calls, selection, search } = deps;
    const server = createMcpServer(
      { config, catalog, calls, selection, search },
      context,
      "legacy",
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide as never);
    await client.connect(clientSide);
    return server;
  }

  /** The official v1 client over HTTP to the real /mcp: each request a new server there. */
  async function overHttp(capabilities: Record<string, unknown>, runId?: string) {
    const client = legacyClient(capabilities);
    const transport = new TransportV1(mcpUrl(), { requestInit: { headers: auth(runId) } });
    await client.connect(transport);
    return { client, transport };
  }

  /** A raw 2025-11-25 `tools/call` of the tool, with the session id given. */
  async function legacyCall(acct: string, sessionId: string) {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
        "mcp-session-id": sessionId,
      },
      json: {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: TOOL, arguments: { account: acct } },
      },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as {
      result?: CallToolResult;
      error?: { code: number; data?: { elicitations?: unknown[] } };
    };
  }

  /** A session id of this version carrying `payload` as its JSON, as a forger would make it. */
  const forged = (payload: unknown, nonce = "A".repeat(22)) =>
    `tb1.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${nonce}`;

  it("over the real /mcp, a 2025-11-25 client that declared URL elicitation gets -32042 with the URL elicitation, then the same request runs as a new call", async () => {
    const acct = account();
    const runId = system.runId();
    const { client, transport } = await overHttp(URL_ELICITATION, runId);
    try {
      // The initialize was answered with a session id holding what the client declared, which
      // the client sends on every later request: visible ASCII, versioned, unique.
      const sessionId = transport.sessionId ?? "";
      expect(sessionId).toMatch(/^tb1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
      expect(readSessionId(sessionId)).toEqual({ elicitation: { url: {} } });
      await connectsThenRuns(client, runId, acct);
      // Ending the session is refused with 405 (nothing to end), which the client takes.
      await expect(transport.terminateSession()).resolves.toBeUndefined();
      expect(transport.sessionId).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("over the real /mcp, a 2025-11-25 client that takes forms only still gets the failed result with the link", async () => {
    const acct = account();
    const { client, transport } = await overHttp({ elicitation: {} });
    try {
      // An empty elicitation is form mode, as 2025-11-25 has it.
      expect(readSessionId(transport.sessionId)).toEqual({ elicitation: { form: {} } });
      const result = (await client.callTool({
        name: TOOL,
        arguments: { account: acct },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result._meta?.["toolbus/failure"]).toEqual(failureOf(acct));
      expect(textOf(result)).toContain(linkFor(acct));
    } finally {
      await client.close();
    }
  });

  it("reads a session id defensively: a malformed, unknown, altered or oversized one counts as none sent (the failed result, never a 4xx or 500)", async () => {
    const wellFormed = mintSessionId(URL_ELICITATION);
    const [, payload, nonce] = wellFormed.split(".");
    const refused = [
      "",
      "not-a-toolbus-session",
      "3f2b8a1c-0d4e-4f5a-9b6c-7d8e9f0a1b2c",
      `tb2.${payload}.${nonce}`,
      `tb1.${payload}`,
      `tb1.${payload}.short`,
      `tb1.${payload}!.${nonce}`,
      `tb1.${Buffer.from("not json").toString("base64url")}.${nonce}`,
      forged(["elicitation"]),
      forged({ elicitation: { url: {} }, admin: true }),
      forged({ elicitation: { url: { anything: 1 } } }),
      forged({ elicitation: { url: true } }),
      forged({ elicitation: { url: {} } }, "A".repeat(600)),
      `${wellFormed}${"A".repeat(600)}`,
    ];
    for (const sessionId of refused) {
      expect(readSessionId(sessionId), sessionId).toBeUndefined();
      const acct = account();
      const answered = await legacyCall(acct, sessionId);
      expect(answered.error, sessionId).toBeUndefined();
      expect(answered.result?.isError, sessionId).toBe(true);
      expect(answered.result?._meta?.["toolbus/failure"]).toEqual(failureOf(acct));
    }
    // Unsigned on purpose: one made up by hand changes only what its own caller is offered.
    const acct = account();
    const madeUp = await legacyCall(acct, forged({ elicitation: { url: {} } }));
    expect(madeUp.error?.code).toBe(ErrorCode.UrlElicitationRequired);
    expect(madeUp.error?.data?.elicitations).toMatchObject([{ mode: "url", url: linkFor(acct) }]);
  });

  it("keeps in the session id only what Toolbus reads later: elicitation modes, sampling and roots", () => {
    const declared = {
      elicitation: { form: { applyDefaults: true }, url: {} },
      sampling: { context: {}, tools: {}, other: {} },
      roots: { listChanged: true },
      experimental: { anything: { at: "all" } },
      tasks: { requests: {} },
    };
    const sessionId = mintSessionId(declared);
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    expect(sessionId.length).toBeLessThan(200);
    expect(readSessionId(sessionId)).toEqual({
      elicitation: { form: {}, url: {} },
      sampling: { context: {}, tools: {} },
      roots: {},
    });
    // Unique per initialize, however alike the clients.
    expect(mintSessionId(declared)).not.toBe(sessionId);
    expect(readSessionId(mintSessionId(undefined))).toEqual({});
    expect(readSessionId(mintSessionId({ elicitation: [], sampling: null, roots: "yes" }))).toEqual(
      {},
    );
    // A registered server's requests reach a 2025-11-25 caller as its session says it can take
    // them; without a session id that reads, it may be asked anything, as before.
    expect(legacyCapabilities(readSessionId(mintSessionId({ elicitation: {} })))).toEqual({
      elicitation: { form: {} },
    });
    expect(legacyCapabilities(undefined)).toEqual({ elicitation: {}, sampling: {}, roots: {} });
  });

  it("where the server saw a caller declare URL elicitation: -32042 with the URL elicitation, then the same request runs as a new call", async () => {
    const acct = account();
    const runId = system.runId();
    const client = legacyClient(URL_ELICITATION);
    const server = await connectedServer(client, runId);
    try {
      await connectsThenRuns(client, runId, acct);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("where the server saw a caller that takes forms only: the failed result", async () => {
    const acct = account();
    const client = legacyClient({ elicitation: {} });
    const server = await connectedServer(client, system.runId());
    try {
      const result = (await client.callTool({
        name: TOOL,
        arguments: { account: acct },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result._meta?.["toolbus/failure"]).toEqual(failureOf(acct));
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("the decision, for a call record", () => {
  const spec = toolSpec.parse({
    id: TOOL,
    toolset: "test_connections",
    title: "Acts as you",
    description: "Reads your GitHub account.",
    category: "utility",
    usageHint: "tests",
    inputSchema: { type: "object" },
  });

  function failed(failure: Failure, callId = "call-1"): CallRecord {
    return callRecord.parse({
      parentRunId: "run-1",
      callId,
      toolId: TOOL,
      toolset: "test_connections",
      toolVersion: "1",
      input: {},
      inputHash: "hash",
      status: "failed",
      requestedBy: { id: "key-1", role: "member" },
      scheduledAt: "2026-01-01T00:00:00.000Z",
      result: {
        status: "failed",
        output: failure.message,
        data: null,
        failure,
        durationMs: 3,
        resultBytes: 0,
        completedAt: "2026-01-01T00:00:01.000Z",
      },
    });
  }

  const legacy = { era: "legacy" as const, urlElicitation: true, againRunsNew: true };
  const modernCaller = { era: "modern" as const, urlElicitation: true, againRunsNew: true };

  it("is the -32042 error on 2025-11-25 and input_required on 2026-07-28, with the link", () => {
    const call = failed(failureOf("a"));
    const error = connectionRequiredAnswer(call, legacy);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32042);
    expect((error as ProtocolError).data).toEqual({
      elicitations: [
        {
          mode: "url",
          elicitationId: connectElicitationId(call),
          url: linkFor("a"),
          message: MESSAGE,
        },
      ],
    });
    expect(connectionRequiredAnswer(call, modernCaller)).toEqual({
      resultType: "input_required",
      inputRequests: {
        "toolbus/connect/github": {
          method: "elicitation/create",
          params: { mode: "url", message: MESSAGE, url: linkFor("a") },
        },
      },
    });
  });

  it("is nothing (the failed result answers) whenever the caller cannot be sent to connect", () => {
    const call = failed(failureOf("a"));
    for (const caller of [legacy, modernCaller]) {
      expect(connectionRequiredAnswer(call, { ...caller, urlElicitation: false })).toBeUndefined();
      expect(connectionRequiredAnswer(call, { ...caller, againRunsNew: false })).toBeUndefined();
      expect(connectionRequiredAnswer(failed(failureOf("a", false)), caller)).toBeUndefined();
      const notWeb = failureOf("a");
      if (notWeb.connection) notWeb.connection.connectUrl = "javascript:alert(1)";
      expect(connectionRequiredAnswer(failed(notWeb), caller)).toBeUndefined();
      expect(
        connectionRequiredAnswer(failed(Failures.upstreamError("The upstream said no.")), caller),
      ).toBeUndefined();
    }
    expect(
      connectionRequiredAnswer(call, {
        ...modernCaller,
        inputResponses: { [connectKey("github")]: { action: "decline" } },
      }),
    ).toBeUndefined();
    // An answer to another provider's request does not count for this one.
    expect(
      connectionRequiredAnswer(call, {
        ...modernCaller,
        inputResponses: { [connectKey("google")]: { action: "accept" } },
      }),
    ).toMatchObject({ resultType: "input_required" });
  });

  it("names the elicitation after the call: stable for it, another for another call", () => {
    const one = connectElicitationId({ parentRunId: "run-1", callId: "call-1" });
    expect(one).toMatch(/^connect-[0-9a-f]{32}$/);
    expect(connectElicitationId({ parentRunId: "run-1", callId: "call-1" })).toBe(one);
    expect(connectElicitationId({ parentRunId: "run-1", callId: "call-2" })).not.toBe(one);
    expect(connectElicitationId({ parentRunId: "run-2", callId: "call-1" })).not.toBe(one);
  });

  it("as the failed result, says where to connect once, and keeps the connection in _meta", () => {
    const result = callToolResult(failed(failureOf("a")), spec);
    expect(result._meta?.["toolbus/failure"]).toEqual(failureOf("a"));
    expect(textOf(result)).toBe(
      `${MESSAGE} A person connects their github account by opening ${linkFor("a")} in a ` +
        `browser. Call ${TOOL} again with the same arguments once it is connected.`,
    );
    // A message that already gives the link is not told it twice.
    const told = { ...failureOf("a"), message: `Connect GitHub at ${linkFor("a")}.` };
    expect(textOf(callToolResult(failed(told), spec))).toBe(
      `Connect GitHub at ${linkFor("a")}. Call ${TOOL} again with the same arguments once it is connected.`,
    );
    // Other failures read as before.
    const other = Failures.upstreamError("The upstream said no.");
    expect(textOf(callToolResult(failed(other), spec))).toBe("The upstream said no.");
  });
});

/**
 * A caller that declared URL elicitation: the first call is refused with -32042 carrying the
 * connect link (its elicitation id derived from the call: the same for the same call, another
 * for another); once the link is followed, the same request runs as a new call.
 */
async function connectsThenRuns(
  client: {
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  },
  runId: string,
  acct: string,
): Promise<void> {
  const error = await client.callTool({ name: TOOL, arguments: { account: acct } }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UrlElicitationRequiredError);
  const asked = error as UrlElicitationRequiredError;
  expect(asked.code).toBe(ErrorCode.UrlElicitationRequired);
  const [first] = await callsOf(runId);
  expect(asked.elicitations).toEqual([
    {
      mode: "url",
      elicitationId: connectElicitationId({ parentRunId: runId, callId: first?.callId ?? "" }),
      url: linkFor(acct),
      message: MESSAGE,
    },
  ]);
  openLink(asked.elicitations[0]?.url ?? "");
  const retried = (await client.callTool({
    name: TOOL,
    arguments: { account: acct },
  })) as CallToolResult;
  expect(retried.isError).toBe(false);
  expect(retried.structuredContent).toEqual({ account: acct });
  const calls = await callsOf(runId);
  expect(calls.map((call) => call.status)).toEqual(["failed", "succeeded"]);
  expect(calls[0]?.callId).not.toBe(calls[1]?.callId);
}
