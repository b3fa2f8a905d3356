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
import { initializeIn, mintSessionId, readSessionId, SESSION_ID_HEADER } from "./session-id";

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
  // The body is already read and bounded (limitRequestBody): parsed once, for both paths.
  const { request, parsedBody } = await withParsedBody(c.req.raw);
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
  // Through the context, so the headers set on the way in (request id, no-store) stay. A JSON
  // answer is complete once made: handed on whole, it goes out with its length in one write, as
  // the REST routes' answers do, rather than read back and sent in chunks like a stream.
  const body = isJsonAnswer(response) ? await response.text() : response.body;
  return c.newResponse(body, response);
}

/** An answer in JSON (not an event stream): its body is whole once the SDK returns it. */
function isJsonAnswer(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith("application/json") === true;
}

/**
 * The request's body as JSON, read once. Given the parsed body the SDK reads nothing more of
 * the request; one whose body is not JSON is handed on with its body again, for the SDK to
 * answer as it answers one (no clone: teeing the body costs more than reading it).
 */
async function withParsedBody(raw: Request): Promise<{ request: Request; parsedBody: unknown }> {
  const text = await raw.text();
  try {
    return { request: raw, parsedBody: JSON.parse(text) };
  } catch {
    return { request: new Request(raw, { body: text }), parsedBody: undefined };
  }
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
  requestContext: McpRequestContext,
  options: { authInfo: AuthInfo; parsedBody?: unknown },
): Promise<Response> {
  // What the caller declared in its `initialize`, as the session id it was given carries it:
  // the server made for this request never saw that `initialize` (session-id.ts).
  const declared = readSessionId(request.headers.get(SESSION_ID_HEADER));
  const context = declared ? { ...requestContext, declared } : requestContext;
  // A tool call answers on an event stream when the caller reads one: its progress, log
  // messages and servers' requests go there while it runs. Everything else answers in JSON.
  const streams = await toolCallOnStream(request, options.parsedBody, deps);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streams,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  const relatedTo = (options.parsedBody as { id?: string | number } | undefined)?.id;
  // Only a streamed answer has a caller to hang up: a JSON one makes no signal for it.
  const hangUp = streams ? new AbortController() : undefined;
  const server = createMcpServer(
    deps,
    hangUp && relatedTo !== undefined
      ? {
          ...context,
          write: (message) =>
            transport.send(message as JSONRPCMessage, { relatedRequestId: relatedTo }),
          hungUp: hangUp.signal,
        }
      : context,
    "legacy",
  );
  await server.connect(transport);
  if (hangUp) {
    // The stream stays open until the call is answered: the server closes once it ends.
    const response = await transport.handleRequest(request, options);
    if (!response.body) {
      await server.close();
      return response;
    }
    return new Response(
      endsWith(response.body, () => {
        // Ended or cancelled: a caller gone is asked nothing more (relay.ts).
        hangUp.abort();
        void server.close().catch(() => undefined);
      }),
      response,
    );
  }
  try {
    const response = await transport.handleRequest(request, options);
    const initialize = initializeIn(options.parsedBody);
    return initialize && response.status === 200
      ? withSessionId(response, mintSessionId(initialize.capabilities))
      : response;
  } finally {
    // The JSON answer is complete once handleRequest resolves.
    await server.close();
  }
}

/**
 * Whether a tool call is answered on an event stream: one `tools/call` naming a tool, from a
 * caller that reads a stream, with something to send on it before the result — progress the
 * caller asked for (a progress token), or a registered MCP server's log messages and requests
 * — or a `tasks/result` (its task's status before its result). Anything else (a built-in tool
 * without a token, a call that names no tool) answers in JSON.
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
  // A task's result is held until the task ends; its status is told on the stream first.
  if (method === "tasks/result") return true;
  if (method !== "tools/call" || typeof params?.name !== "string") return false;
  if (params._meta?.progressToken !== undefined) return true;
  // Through the search surface's call_tool, the tool it names.
  const named = params.name === CALL_TOOL ? params.arguments?.tool : params.name;
  if (typeof named !== "string") return false;
  const spec = await deps.catalog.getTool(named);
  return spec?.implementation.kind === "mcp";
}

/** The answer to an `initialize`, with the session id that carries what the caller declared. */
function withSessionId(response: Response, sessionId: string): Response {
  const headers = new Headers(response.headers);
  headers.set(SESSION_ID_HEADER, sessionId);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** The body as it is, with `end` called once it ended or its reader cancelled it. */
function endsWith(body: ReadableStream<Uint8Array>, end: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const finish = () => {
    if (!ended) {
      ended = true;
      end();
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read().catch((error: unknown) => {
        finish();
        throw error;
      });
      if (next.done) {
        finish();
        controller.close();
      } else {
        controller.enqueue(next.value);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/** Most answers to relayed requests one POST may carry. */
const MAX_ANSWERS_PER_POST = 32;

/** The answers a POST carries to relayed requests, when that is all it carries. */
function relayAnswersIn(body: unknown): Array<{ id: string; answer: unknown }> | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return undefined;
  // A caller answers what it was asked, a few at a time; a batch of more is not answers.
  if (messages.length > MAX_ANSWERS_PER_POST) return undefined;
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
    // The first answer that answers nothing waiting ends it: the rest are not read.
    if (!target || !parsed.success) break;
    if (!(await channel.answer(target.key, target.requestId, context.principal.id, parsed.data))) {
      break;
    }
    taken++;
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
