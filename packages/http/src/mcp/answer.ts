import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type JSONRPCMessage,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { CallChannel } from "@toolbus/core/ports";
import { CALL_TOOL } from "@toolbus/wire/mcp-surface";
import { relayAnswer } from "@toolbus/wire/model/relay";
import type { Context } from "hono";
import { MAX_BODY_BYTES } from "../common/body";
import type { HttpEnv } from "../common/env";
import { relayTarget } from "./relay";
import { createMcpServer, type McpDeps, type McpRequestContext } from "./server";

/** Where the Toolbus context of a request rides through the SDK to the server it makes. */
const CONTEXT = "toolbus/context";

/** The 2026-07-28 entry point, one per set of dependencies (it holds nothing per request). */
const modernHandlers = new WeakMap<McpDeps, McpHttpHandler>();

/**
 * Answers one POST to `/mcp`, on whichever protocol generation it speaks, with a new server
 * that nothing outlives. 2026-07-28 goes through the SDK's own entry point (discovery, the
 * per-request `_meta` envelope, `Mcp-Method` / `Mcp-Name` checks, `subscriptions/listen`);
 * 2025-11-25 and earlier through a stateless transport answering plain JSON, as before. Its
 * own module: the MCP SDK loads on the endpoint's first request, not on the API's start.
 */
export async function answerMcp(
  c: Context<HttpEnv>,
  deps: McpDeps,
  context: McpRequestContext,
): Promise<Response> {
  const request = c.req.raw;
  // The body is already read and bounded (limitRequestBody): parsed once, for both paths.
  const parsedBody: unknown = await request
    .clone()
    .json()
    .catch(() => undefined);
  const options = {
    // The caller as the SDK hands it to the server's factory. Never the key itself.
    authInfo: {
      token: "",
      clientId: context.principal.id,
      scopes: [context.principal.role],
      extra: { [CONTEXT]: context },
    } satisfies AuthInfo,
    ...(parsedBody === undefined ? {} : { parsedBody }),
  };
  // A caller's answers to requests relayed from a running call: the relay's, not a server's.
  const answers = deps.relay ? relayAnswersIn(parsedBody) : undefined;
  if (answers && deps.relay) return takeAnswers(c, deps.relay.channel, context, answers);
  const legacy = await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY_BYTES });
  const response = legacy
    ? await answerLegacy(request, deps, context, options)
    : await modernHandler(deps).fetch(request, options);
  // Through the context, so the headers set on the way in (request id, no-store) stay.
  return c.newResponse(response.body, response);
}

function modernHandler(deps: McpDeps): McpHttpHandler {
  let handler = modernHandlers.get(deps);
  if (!handler) {
    handler = createMcpHandler(
      ({ authInfo }) => createMcpServer(deps, contextOf(authInfo), "modern"),
      // 2025 traffic is answered below, as JSON: the SDK's own fallback answers with a stream.
      { legacy: "reject", maxRequestBodySize: MAX_BODY_BYTES },
    );
    modernHandlers.set(deps, handler);
  }
  return handler;
}

/** 2025-11-25 and earlier: stateless, one JSON answer per POST, as API Gateway passes it on. */
async function answerLegacy(
  request: Request,
  deps: McpDeps,
  context: McpRequestContext,
  options: { authInfo: AuthInfo; parsedBody?: unknown },
): Promise<Response> {
  // A tool call answers on an event stream when the caller reads one: its progress, log
  // messages and servers' requests go there while it runs. Everything else answers in JSON.
  const streams = await toolCallOnStream(request, options.parsedBody, deps);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streams,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  const relatedTo = (options.parsedBody as { id?: string | number } | undefined)?.id;
  const server = createMcpServer(
    deps,
    streams && relatedTo !== undefined
      ? {
          ...context,
          write: (message) =>
            transport.send(message as JSONRPCMessage, { relatedRequestId: relatedTo }),
        }
      : context,
    "legacy",
  );
  await server.connect(transport);
  if (streams) {
    // The stream stays open until the call is answered: the server closes once it ends.
    const response = await transport.handleRequest(request, options);
    if (!response.body) {
      await server.close();
      return response;
    }
    const closing = new TransformStream<Uint8Array, Uint8Array>({
      flush: () => void server.close().catch(() => undefined),
    });
    return new Response(response.body.pipeThrough(closing), response);
  }
  try {
    return await transport.handleRequest(request, options);
  } finally {
    // The JSON answer is complete once handleRequest resolves.
    await server.close();
  }
}

/**
 * Whether a tool call is answered on an event stream: one `tools/call` naming a tool, from a
 * caller that reads a stream, with something to send on it before the result — progress the
 * caller asked for (a progress token), or a registered MCP server's log messages and requests.
 * Anything else (a built-in tool without a token, a call that names no tool) answers in JSON.
 */
async function toolCallOnStream(request: Request, body: unknown, deps: McpDeps): Promise<boolean> {
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("text/event-stream") || body === null || typeof body !== "object") {
    return false;
  }
  const { method, params } = body as {
    method?: unknown;
    params?: {
      name?: unknown;
      arguments?: { tool?: unknown };
      _meta?: { progressToken?: unknown };
    };
  };
  if (method !== "tools/call" || typeof params?.name !== "string") return false;
  if (params._meta?.progressToken !== undefined) return true;
  // Through the search surface's call_tool, the tool it names.
  const named = params.name === CALL_TOOL ? params.arguments?.tool : params.name;
  if (typeof named !== "string") return false;
  const spec = await deps.catalog.getTool(named);
  return spec?.implementation.kind === "mcp";
}

/** The answers a POST carries to relayed requests, when that is all it carries. */
function relayAnswersIn(body: unknown): Array<{ id: string; answer: unknown }> | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return undefined;
  const answers: Array<{ id: string; answer: unknown }> = [];
  for (const message of messages) {
    if (message === null || typeof message !== "object" || "method" in message) return undefined;
    const { id, result, error } = message as { id?: unknown; result?: unknown; error?: unknown };
    if (!relayTarget(id)) return undefined;
    answers.push({ id: id as string, answer: error === undefined ? { result } : { error } });
  }
  return answers;
}

/**
 * Hands each answer to the request it answers, wherever its call runs: 202 as the transport
 * answers responses, once every one was taken; 400 when one answers nothing waiting (already
 * answered, another key's, or malformed).
 */
async function takeAnswers(
  c: Context<HttpEnv>,
  channel: CallChannel,
  context: McpRequestContext,
  answers: Array<{ id: string; answer: unknown }>,
): Promise<Response> {
  let taken = 0;
  for (const { id, answer } of answers) {
    const target = relayTarget(id);
    const parsed = relayAnswer.safeParse(answer);
    if (!target || !parsed.success) continue;
    if (await channel.answer(target.key, target.requestId, context.principal.id, parsed.data)) {
      taken++;
    }
  }
  if (taken === answers.length) return c.body(null, 202);
  return c.json(
    {
      jsonrpc: "2.0",
      error: { code: -32600, message: "No relayed request waits for this answer." },
      id: null,
    },
    400,
  );
}

function contextOf(authInfo: AuthInfo | undefined): McpRequestContext {
  const context = authInfo?.extra?.[CONTEXT];
  if (!context) throw new Error("An MCP request reached the server without its Toolbus context.");
  return context as McpRequestContext;
}
