import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Context } from "hono";
import { MAX_BODY_BYTES } from "../common/body";
import type { HttpEnv } from "../common/env";
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
  const server = createMcpServer(deps, context, "legacy");
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, options);
  } finally {
    // The JSON answer is complete once handleRequest resolves.
    await server.close();
  }
}

function contextOf(authInfo: AuthInfo | undefined): McpRequestContext {
  const context = authInfo?.extra?.[CONTEXT];
  if (!context) throw new Error("An MCP request reached the server without its Toolbus context.");
  return context as McpRequestContext;
}
