import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "../common/env";

/**
 * What the stage's streaming endpoint (a Lambda Function URL on AWS) serves: the answers that
 * stay open — a run's events, the stage's events, MCP — and `/health`. Everything else is the
 * HTTP API's, behind API Gateway's throttle and access log; the streaming endpoint has neither.
 */
const STREAMED: ReadonlyArray<{ method?: string; path: RegExp }> = [
  { method: "GET", path: /^\/health$/ },
  { method: "GET", path: /^\/v1\/events$/ },
  { method: "GET", path: /^\/v1\/runs\/[^/]+\/events$/ },
  { path: /^\/mcp$/ },
  // Where a client that got /mcp's 401 from this URL looks for how to sign in.
  { method: "GET", path: /^\/\.well-known\/oauth-protected-resource(\/.*)?$/ },
];

export function isStreamedRoute(method: string, path: string): boolean {
  return STREAMED.some(
    (route) => (!route.method || route.method === method) && route.path.test(path),
  );
}

/** Answers 404 for what only the HTTP API serves, naming where to send it instead. */
export function streamedRoutesOnly(): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    if (isStreamedRoute(c.req.method, c.req.path)) return next();
    return c.json(
      {
        error: {
          code: "not_found",
          message: `${c.req.method} ${c.req.path} is served by the API URL, not the streaming URL (which serves event streams, /mcp, its OAuth metadata and /health).`,
        },
      },
      404,
    );
  };
}
