import type { OpenAPIHono } from "@hono/zod-openapi";
import type { SearchService } from "@toolbus/core/app/search/service";
import { resolveMode } from "@toolbus/core/app/selection/select";
import type { SelectionService } from "@toolbus/core/app/selection/service";
import { ValidationError } from "@toolbus/core/errors";
import type { CallChannel } from "@toolbus/core/ports";
import { MCP_HEADERS, MCP_SURFACES, type McpSurface } from "@toolbus/wire/mcp-surface";
import { callId as callIdSchema, runId as runIdSchema } from "@toolbus/wire/model/ids";
import type { Context, MiddlewareHandler } from "hono";
import { type AuthDeps, authenticate } from "../common/auth";
import { limitRequestBody } from "../common/body";
import type { HttpEnv } from "../common/env";
import { logFailure } from "../common/errors";
import type { McpRelay } from "./relayed-call";
import type { McpDeps, McpRequestContext } from "./server";

export const MCP_PATH = "/mcp";

/** What `/mcp` needs of the stage: the key check's, selection's and the server's own. */
export type McpRouteDeps = AuthDeps &
  Pick<McpDeps, "config" | "catalog" | "calls" | "federation"> & {
    selection: SelectionService;
    search: SearchService;
    /**
     * The host names `/mcp` answers (DNS-rebinding protection), or `any` where the platform
     * routes by host already (API Gateway, Function URLs). Default: the stage's
     * `mcp.allowedHosts`, else loopback.
     */
    allowedHosts?: readonly string[] | "any";
    /** The relay to running calls; without it nothing reaches a caller mid-call. */
    channel?: CallChannel;
    /** The answer reaches the caller only once it ends (API Gateway): see McpRelay. */
    followBuffered?: boolean;
  };

/** What `/mcp` answers by default: this machine, by name or address. */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/**
 * `/mcp`: MCP Streamable HTTP, stateless. Every POST gets a new server and transport and
 * nothing outlives it, so any instance (or Lambda) can answer any request; there are no
 * session ids. Answers are plain JSON rather than an SSE stream, which API Gateway and Lambda
 * pass through without response streaming. Keys are checked as on the REST routes (http/auth.ts)
 * and permissions decided by the same rules (app/access.ts): no key or a bad one is an HTTP
 * 401 before anything MCP happens.
 */
export function registerMcpRoutes(app: OpenAPIHono<HttpEnv>, deps: McpRouteDeps): void {
  const hosts = deps.config.mcp.allowedHosts ?? deps.allowedHosts ?? LOOPBACK_HOSTS;
  if (hosts !== "any") {
    let guard: MiddlewareHandler<HttpEnv> | undefined;
    // First: a page on another site gets 403 whatever key it carries. Loaded with the first
    // request, as the rest of the MCP SDK is: the API's cold start does not carry it.
    app.use(MCP_PATH, async (c, next) => {
      guard ??= (await import("./guard")).dnsRebindingGuard(hosts);
      return guard(c, next);
    });
  }
  app.use(MCP_PATH, authenticate(deps));
  // The REST API's body rules (size, nesting depth), refused in JSON-RPC's own shape.
  app.use(
    MCP_PATH,
    limitRequestBody({
      refuse: (c, error) =>
        jsonRpcError(
          c,
          error.status as 400 | 413,
          error.status === 413 ? -32000 : -32600,
          error.message,
        ),
    }),
  );
  const mcpDeps: McpDeps = {
    config: deps.config,
    catalog: deps.catalog,
    calls: deps.calls,
    selection: deps.selection,
    search: deps.search,
    ...(deps.federation ? { federation: deps.federation } : {}),
    ...(deps.channel ? { relay: mcpRelay(deps.channel, deps) } : {}),
  };

  app.post(MCP_PATH, async (c) => {
    const context = requestContext(c, deps);
    const { answerMcp } = await import("./answer");
    return answerMcp(c, mcpDeps, context);
  });

  // A stateless server offers no standalone SSE stream (GET) and no session to end (DELETE).
  app.all(MCP_PATH, (c) => {
    c.header("Allow", "POST");
    return jsonRpcError(c, 405, -32000, "Method not allowed: this MCP endpoint is stateless.");
  });
}

/**
 * The relay as `/mcp` uses it. A 2026-07-28 round's state is sealed with a secret every
 * instance of the stage holds: the admin key, read at use (on AWS a bound secret).
 */
function mcpRelay(channel: CallChannel, deps: McpRouteDeps): McpRelay {
  const { adminKey } = deps;
  return {
    channel,
    stateSecret: () => (typeof adminKey === "function" ? adminKey() : adminKey),
    ...(deps.followBuffered ? { buffered: true } : {}),
  };
}

/** An HTTP-level refusal in JSON-RPC's shape, as the MCP transport answers its own. */
function jsonRpcError(
  c: Context<HttpEnv>,
  status: 400 | 405 | 413,
  code: number,
  message: string,
): Response {
  return c.json({ jsonrpc: "2.0", error: { code, message }, id: null }, status);
}

/** Mode, run id and call id from the request; a malformed one is a 400 before any MCP work. */
function requestContext(c: Context<HttpEnv>, deps: McpRouteDeps): McpRequestContext {
  const mode = resolveMode(
    deps.config,
    c.req.header(MCP_HEADERS.mode) || c.req.query("mode") || undefined,
  );
  const runId = c.req.header(MCP_HEADERS.runId) || undefined;
  if (runId !== undefined && !runIdSchema.safeParse(runId).success) {
    throw new ValidationError("X-Toolbus-Run-Id is not a valid run id.", {
      details: [{ path: MCP_HEADERS.runId, message: "1-128 characters: letters, digits, . _ : -" }],
    });
  }
  const callId = c.req.header(MCP_HEADERS.callId) || undefined;
  if (callId !== undefined && !callIdSchema.safeParse(callId).success) {
    throw new ValidationError("X-Toolbus-Call-Id is not a valid call id.", {
      details: [
        { path: MCP_HEADERS.callId, message: "1-128 characters: letters, digits, . _ : -" },
      ],
    });
  }
  const surface = c.req.header(MCP_HEADERS.surface) || c.req.query("surface") || "catalog";
  if (!isSurface(surface)) {
    throw new ValidationError(`Unknown MCP surface ${surface}.`, {
      details: [{ path: MCP_HEADERS.surface, message: `One of: ${MCP_SURFACES.join(", ")}.` }],
    });
  }
  return {
    principal: c.get("principal"),
    mode,
    surface,
    ...(runId ? { runId } : {}),
    ...(callId ? { callId } : {}),
    logFailure: (error) => logFailure(c, error),
  };
}

function isSurface(value: string): value is McpSurface {
  return (MCP_SURFACES as readonly string[]).includes(value);
}
