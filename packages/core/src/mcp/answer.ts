import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Context } from "hono";
import { MAX_BODY_BYTES } from "../http/body";
import type { HttpEnv } from "../http/env";
import { createMcpServer, type McpDeps, type McpRequestContext } from "./server";

/**
 * Answers one POST to `/mcp` with a new server and transport that nothing outlives. Its own
 * module: the MCP SDK's server loads on the endpoint's first request, not on the API's start.
 */
export async function answerMcp(
  c: Context<HttpEnv>,
  deps: McpDeps,
  context: McpRequestContext,
): Promise<Response> {
  const server = createMcpServer(deps, context);
  const transport = new WebStandardStreamableHTTPServerTransport({
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(c.req.raw);
    // Through the context, so the headers set on the way in (request id, no-store) stay.
    return c.newResponse(response.body, response);
  } finally {
    // The JSON answer is complete once handleRequest resolves.
    await server.close();
  }
}
