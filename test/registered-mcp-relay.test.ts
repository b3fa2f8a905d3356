import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { McpServer as LegacyMcpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  McpServer,
} from "@modelcontextprotocol/server";
import { createHttpClient, type HttpClient } from "@toolbus/core/outbound";
import type { ToolCaller } from "@toolbus/core/tool-definition";
import { ToolFailure } from "@toolbus/core/tool-definition";
import type {
  AttachedCaller,
  RelayAnswer,
  RelayedMethod,
  RelayNotification,
} from "@toolbus/wire/model/relay";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  callRemoteTool,
  discoverRemoteTools,
  getRemotePrompt,
  type McpConnection,
  mcpConnection,
  protocolFor,
} from "../packages/core/src/registered/mcp-client";
import { type Loopback, listenOnLoopback } from "./support/loopback";
import { startMcpUpstream } from "./support/mcp-upstream";
import { outboundConfig } from "./support/outbound";

/*
 * The outbound MCP client (registered/mcp-client) against real servers on loopback: what a
 * registered server asks of its client reaches the call's live caller, in the generation the
 * caller speaks, and the caller's answer reaches the server.
 */

const CONFIRM_SCHEMA = {
  type: "object" as const,
  properties: { confirm: { type: "boolean" as const } },
  required: ["confirm"],
};

/** What the servers below received as their client's answers. */
const received: unknown[] = [];
/** Every JSON-RPC message the servers below received, in order. */
const sent: { method?: string; params?: Record<string, unknown> }[] = [];
/** The status of every POST the client made, in order. */
const statuses: number[] = [];

/** A server of both generations (the v2 SDK's handler): elicitation by `input_required`. */
function bothGenerations() {
  return createMcpHandler(({ era }) => {
    const server = new McpServer(
      { name: "both", version: "1" },
      { capabilities: { logging: {}, prompts: {} } },
    );
    server.registerTool(
      "deploy",
      { description: "Deploys, once confirmed.", inputSchema: z.object({ env: z.string() }) },
      async ({ env }, ctx) => {
        await ctx.mcpReq.log("info", { deploying: env }, "deployer");
        if (era === "legacy") {
          const answer = await ctx.mcpReq.elicitInput({
            message: `Deploy to ${env}?`,
            requestedSchema: CONFIRM_SCHEMA,
          });
          received.push(answer);
          return { content: [{ type: "text", text: `legacy ${answer.action}` }] };
        }
        const confirmed = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
        if (confirmed === undefined) {
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: `Deploy to ${env}?`,
                requestedSchema: CONFIRM_SCHEMA,
              }),
            },
          });
        }
        received.push(confirmed);
        return { content: [{ type: "text", text: `deployed to ${env}: ${confirmed.confirm}` }] };
      },
    );
    server.registerPrompt(
      "greeting",
      { description: "Greets someone, asking their name first." },
      async (ctx) => {
        const name = acceptedContent(ctx.mcpReq.inputResponses, "name");
        if (name === undefined) {
          return inputRequired({
            inputRequests: {
              name: inputRequired.elicit({
                message: "Your name?",
                requestedSchema: { type: "object", properties: { name: { type: "string" } } },
              }),
            },
            requestState: "asked-once",
          });
        }
        return {
          messages: [
            {
              role: "user",
              content: {
                type: "text",
                text: `Hello ${String(name.name)} (${ctx.mcpReq.requestState()})`,
              },
            },
          ],
        };
      },
    );
    return server;
  });
}

/**
 * A 2025-11-25 server with sessions (the v1 SDK), whose tool asks its client mid-call over the
 * call's own event stream: the answer can only reach it while that stream is still open.
 */
function legacyWithSessions() {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
    const id = req.headers["mcp-session-id"];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const body = text ? JSON.parse(text) : undefined;
    if (body) sent.push(body);
    const known = typeof id === "string" ? transports.get(id) : undefined;
    if (known) {
      await known.handleRequest(req, res, body);
      return;
    }
    const server = new LegacyMcpServer(
      { name: "legacy", version: "1" },
      { capabilities: { logging: {} } },
    );
    server.registerTool(
      "deploy",
      { description: "Deploys, once confirmed.", inputSchema: { env: z.string() } },
      async ({ env }, extra) => {
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "warning", logger: "deployer", data: { deploying: env } },
        });
        try {
          // On the call's own stream (an unrelated request would go to the GET stream).
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: { message: `Deploy to ${env}?`, requestedSchema: CONFIRM_SCHEMA },
            },
            ElicitResultSchema,
          );
          received.push(answer);
          return { content: [{ type: "text", text: `legacy ${answer.action}` }] };
        } catch (error) {
          const code = (error as { code?: number }).code;
          received.push({ refused: code });
          return { content: [{ type: "text", text: `refused ${code}` }], isError: true };
        }
      },
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (session) => {
        transports.set(session, transport);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

/** A fetch-shaped handler served from node:http, its answer streamed as it is written. */
function fetchServed(handler: { fetch(request: Request): Promise<Response> }) {
  return async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const method = req.method ?? "GET";
    if (method === "POST") sent.push(JSON.parse(Buffer.concat(chunks).toString()));
    const response = await handler.fetch(
      new Request(`http://127.0.0.1${req.url ?? "/"}`, {
        method,
        headers,
        ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) }),
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  };
}

/** A live caller as the relay would give a tool: its requests answered by `answer`. */
function callerOf(
  attached: Omit<AttachedCaller, "principalId" | "progress">,
  answer: (method: RelayedMethod, params: Record<string, unknown>) => RelayAnswer,
) {
  const asked: { method: RelayedMethod; params: Record<string, unknown> }[] = [];
  const told: RelayNotification[] = [];
  const caller: ToolCaller = {
    describe: async () => ({ principalId: "p-1", progress: false, ...attached }),
    ask: async (method, params) => {
      asked.push({ method, params });
      return answer(method, params);
    },
    tell: (message) => told.push(message),
  };
  return { caller, asked, told };
}

const outbound = createHttpClient(outboundConfig());
/** The outbound client, each POST's status noted. */
const http: HttpClient = {
  request: async (url, request) => {
    const response = await outbound.request(url, request);
    if (request?.method === "POST") statuses.push(response.status);
    return response;
  },
  open: async (url, request) => {
    const stream = await (outbound.open as NonNullable<HttpClient["open"]>)(url, request);
    statuses.push(stream.status);
    return stream;
  },
};
const connect = (url: string): McpConnection =>
  mcpConnection(
    { url },
    { secret: () => undefined, http },
    { owner: "toolset t", timeoutMs: 5_000 },
  );

let both: Loopback;
let legacy: Loopback;

beforeAll(async () => {
  both = await listenOnLoopback(fetchServed(bothGenerations()));
  legacy = await listenOnLoopback(legacyWithSessions());
});

afterAll(async () => {
  await both.close();
  await legacy.close();
});

describe("protocolFor", () => {
  const both = { protocols: ["2025-11-25", "2026-07-28"] as const };
  it("speaks the caller's generation when the server speaks it, else the server's newest", () => {
    expect(protocolFor({ era: "legacy" }, { protocols: [...both.protocols] })).toBe("2025-11-25");
    expect(protocolFor({ era: "modern" }, { protocols: [...both.protocols] })).toBe("2026-07-28");
    expect(protocolFor({ era: "modern" }, { protocols: ["2025-11-25"] })).toBe("2025-11-25");
    expect(protocolFor({ era: "legacy" }, { protocols: ["2026-07-28"] })).toBe("2026-07-28");
  });

  it("speaks the server's newest without a caller, and 2025-11-25 to a server registered before discovery recorded any", () => {
    expect(protocolFor(undefined, { protocols: [...both.protocols] })).toBe("2026-07-28");
    expect(protocolFor(undefined, {})).toBe("2025-11-25");
    expect(protocolFor({ era: "modern" }, {})).toBe("2025-11-25");
  });
});

describe("discovery", () => {
  it("records both generations for a server that speaks both, its tools listed over 2026-07-28", async () => {
    const found = await discoverRemoteTools(connect(both.url), 50);
    expect(found.protocols).toEqual(["2025-11-25", "2026-07-28"]);
    expect(found.tools.map((tool) => tool.name)).toEqual(["deploy"]);
  });

  it("records only 2025-11-25 for a server that answers only initialize", async () => {
    const upstream = await startMcpUpstream([
      {
        tool: { name: "echo", inputSchema: { type: "object" } },
        run: () => ({ content: [{ type: "text", text: "echo" }] }),
      },
    ]);
    try {
      const found = await discoverRemoteTools(connect(upstream.url), 50);
      expect(found.protocols).toEqual(["2025-11-25"]);
      expect(found.tools.map((tool) => tool.name)).toEqual(["echo"]);
    } finally {
      await upstream.close();
    }
  });
});

describe("a call's server requests and log messages", () => {
  it("over 2026-07-28, for a modern caller: the server's elicitation reaches the caller, its answer the server, and the server's log message reaches tell", async () => {
    received.length = 0;
    const { caller, asked, told } = callerOf(
      { era: "modern", capabilities: { elicitation: {} }, logLevel: "debug" },
      () => ({ result: { action: "accept", content: { confirm: true } } }),
    );
    const result = await callRemoteTool(
      connect(both.url),
      "deploy",
      { env: "prod" },
      { protocols: ["2025-11-25", "2026-07-28"], caller },
    );
    expect(result.content).toEqual([{ type: "text", text: "deployed to prod: true" }]);
    const calls = sent.filter((message) => message.method === "tools/call");
    // Each round carries the caller's log level, and no logging/setLevel is sent.
    expect(calls.at(-1)?.params?._meta).toMatchObject({
      "io.modelcontextprotocol/logLevel": "debug",
    });
    expect(sent.some((message) => message.method === "logging/setLevel")).toBe(false);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.method).toBe("elicitation/create");
    expect(asked[0]?.params).toMatchObject({ message: "Deploy to prod?" });
    expect(received).toEqual([{ confirm: true }]);
    expect(told).toContainEqual({
      kind: "log",
      level: "info",
      logger: "deployer",
      data: { deploying: "prod" },
    });
  });

  it("over 2025-11-25, for a legacy caller: the server's request mid-call reaches the caller while the call's stream is open, and its answer reaches the server", async () => {
    received.length = 0;
    const { caller, asked, told } = callerOf(
      { era: "legacy", capabilities: { elicitation: {} }, logLevel: "info" },
      () => ({ result: { action: "accept", content: { confirm: true } } }),
    );
    const result = await callRemoteTool(
      connect(legacy.url),
      "deploy",
      { env: "staging" },
      { caller },
    );
    expect(result.content).toEqual([{ type: "text", text: "legacy accept" }]);
    expect(sent).toContainEqual(
      expect.objectContaining({ method: "logging/setLevel", params: { level: "info" } }),
    );
    expect(asked.map((request) => request.method)).toEqual(["elicitation/create"]);
    expect(received).toEqual([{ action: "accept", content: { confirm: true } }]);
    expect(told).toEqual([
      { kind: "log", level: "warning", logger: "deployer", data: { deploying: "staging" } },
    ]);
  });

  it("passes a caller's error answer to the server as that JSON-RPC error", async () => {
    received.length = 0;
    sent.length = 0;
    const { caller } = callerOf({ era: "legacy", capabilities: { elicitation: {} } }, () => ({
      error: { code: -32601, message: "The caller cannot elicit." },
    }));
    const result = await callRemoteTool(connect(legacy.url), "deploy", { env: "x" }, { caller });
    expect(result.isError).toBe(true);
    expect(received).toEqual([{ refused: -32601 }]);
    // The caller set no log level: none is asked of the server.
    expect(sent.some((message) => message.method === "logging/setLevel")).toBe(false);
  });

  it("declares no capability without a caller, and answers a server's request as a client without it would", async () => {
    received.length = 0;
    const result = await callRemoteTool(connect(legacy.url), "deploy", { env: "x" });
    expect(result.isError).toBe(true);
    expect(received).toEqual([{ refused: -32601 }]);
  });
});

describe("an outbound client that cannot stream", () => {
  it("still calls: each answer is read whole through `request`", async () => {
    const buffered = mcpConnection(
      { url: both.url },
      { secret: () => undefined, http: { request: outbound.request } },
      { owner: "toolset t", timeoutMs: 5_000 },
    );
    const { caller, asked } = callerOf(
      { era: "modern", capabilities: { elicitation: {} } },
      () => ({
        result: { action: "accept", content: { confirm: false } },
      }),
    );
    const result = await callRemoteTool(
      buffered,
      "deploy",
      { env: "dev" },
      {
        protocols: ["2025-11-25", "2026-07-28"],
        caller,
      },
    );
    expect(result.content).toEqual([{ type: "text", text: "deployed to dev: false" }]);
    expect(asked).toHaveLength(1);
  });
});

describe("an upstream JSON-RPC error on tools/call", () => {
  it("survives as the failure's mcpError, code and data as the server sent them", async () => {
    // No caller, so no elicitation capability declared: the server answers -32021 (HTTP 400).
    const error = await callRemoteTool(
      connect(both.url),
      "deploy",
      { env: "prod" },
      {
        protocols: ["2026-07-28"],
      },
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ToolFailure);
    const { failure } = error as ToolFailure;
    expect(failure.kind).toBe("upstream_error");
    expect(failure.mcpError).toEqual({
      code: -32021,
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
    expect(statuses.at(-1)).toBe(400);
  });
});

describe("federation over 2026-07-28", () => {
  it("returns an input_required answer as sent, and passes the caller's responses and state on with the next round", async () => {
    const first = await getRemotePrompt(connect(both.url), "greeting", undefined, {
      protocol: "2026-07-28",
      capabilities: { elicitation: {} },
    });
    expect(first).toMatchObject({
      resultType: "input_required",
      inputRequests: { name: { method: "elicitation/create" } },
      requestState: "asked-once",
    });
    const second = await getRemotePrompt(connect(both.url), "greeting", undefined, {
      protocol: "2026-07-28",
      capabilities: { elicitation: {} },
      inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
      requestState: "asked-once",
    });
    expect(second.messages).toEqual([
      { role: "user", content: { type: "text", text: "Hello Ada (asked-once)" } },
    ]);
  });
});
