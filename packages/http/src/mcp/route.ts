import type { OpenAPIHono } from "@hono/zod-openapi";
import type { SearchService } from "@toolbus/core/app/search/service";
import { resolveMode } from "@toolbus/core/app/selection/select";
import type { SelectionService } from "@toolbus/core/app/selection/service";
import { ValidationError } from "@toolbus/core/errors";
import type { CallChannel, McpSubscriptions } from "@toolbus/core/ports";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import { MCP_HEADERS, MCP_SURFACES, type McpSurface } from "@toolbus/wire/mcp-surface";
import { callId as callIdSchema, runId as runIdSchema } from "@toolbus/wire/model/ids";
import type { Context, MiddlewareHandler } from "hono";
import { type AuthDeps, authenticate } from "../common/auth";
import { limitRequestBody } from "../common/body";
import type { HttpEnv } from "../common/env";
import { logFailure } from "../common/errors";
import type { McpRelay } from "./relayed-call";
import type { McpDeps, McpRequestContext } from "./server";
import type { ResourceStreams } from "./subscriptions";

// The MCP server loads with the first MCP request and is kept.
const answering = onFirstUse(() => import("./answer"));

export const MCP_PATH = "/mcp";

/** What `/mcp` needs of the stage: the key check's, selection's and the server's own. */
export type McpRouteDeps = AuthDeps &
  Pick<McpDeps, "config" | "catalog" | "calls" | "federation" | "taskIndex"> & {
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
    /** Resource subscriptions (2025-11-25), told of on the `GET /mcp` stream. */
    mcpSubscriptions?: McpSubscriptions;
    /** How often that stream reads the subscribed resources, ms (default 5 s). */
    mcpResourcePollMs?: number;
    /** That stream's bounds, as the event streams': longest open, keep-alive, key checks. */
    followMaxMs?: number;
    keepAliveMs?: number;
    keyCheckMs?: number;
    maxStreamsPerKey?: number;
  };

/** What `/mcp` answers by default: this machine, by name or address. */
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/**
 * `/mcp`: MCP Streamable HTTP, stateless. Every POST gets a new server and transport and
 * nothing outlives it, so any instance (or Lambda) can answer any request. A 2025-era
 * `initialize` is answered with a session id that holds only what the client declared
 * (session-id.ts), read back from each later request; no server keeps anything. Answers are plain JSON rather than an SSE stream, which API Gateway and Lambda
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
    ...(deps.federation && deps.mcpSubscriptions ? { subscriptions: deps.mcpSubscriptions } : {}),
    ...(deps.channel ? { relay: mcpRelay(deps.channel, deps) } : {}),
    ...(deps.taskIndex ? { taskIndex: deps.taskIndex } : {}),
  };

  app.post(MCP_PATH, async (c) => {
    const context = requestContext(c, deps);
    const { answerMcp } = await answering();
    return answerMcp(c, mcpDeps, context);
  });

  // The standalone SSE stream of 2025-11-25 (and the Streamable HTTP generations before it):
  // where the caller's resource subscriptions are told of, when the stage keeps them. The
  // stream holds nothing a reconnect loses: subscriptions and what was last seen of each
  // resource are stored (subscriptions.ts). 2026-07-28 listens with subscriptions/listen.
  // Where answers are buffered (API Gateway) no stream is offered: every 2025 client opens one
  // as it connects, and would hold a function for nothing; the streaming URL serves it.
  const { federation, mcpSubscriptions } = deps;
  const streamed = federation && mcpSubscriptions && !deps.followBuffered;
  let streams: Promise<ResourceStreams> | undefined;
  app.get(MCP_PATH, async (c, next) => {
    if (!streamed || !federation || !mcpSubscriptions || !offersStream(c)) return next();
    const context = requestContext(c, deps);
    if (context.surface !== "catalog") return next();
    // Only for a caller with something to subscribe to: a client of a stage (or a key) whose
    // servers offer it no resource is answered 405 as before, and holds no stream.
    const offered = await federation.resources(context.principal, context.mode);
    if (offered.items.length === 0) return next();
    streams ??= import("./subscriptions").then(
      ({ ResourceStreams }) =>
        new ResourceStreams({
          config: deps.config,
          keys: deps.keys,
          federation,
          subscriptions: mcpSubscriptions,
          pollMs: deps.mcpResourcePollMs,
          maxMs: deps.followMaxMs,
          keepAliveMs: deps.keepAliveMs,
          keyCheckMs: deps.keyCheckMs,
          maxStreamsPerKey: deps.maxStreamsPerKey,
        }),
    );
    return (await streams).serve(c, context);
  });

  // A stateless server offers no session to end (DELETE: 405, which the spec allows and
  // clients take as such; the session id was only ever what the client declared), nor a
  // stream on other GETs.
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

/** The generations whose clients open a standalone SSE stream with GET (no header: 2025-03-26). */
const STREAMING_GENERATIONS: ReadonlySet<string> = new Set([
  "2025-03-26",
  "2025-06-18",
  "2025-11-25",
]);

/** A GET that asks for the standalone SSE stream, on a generation that has one. */
function offersStream(c: Context<HttpEnv>): boolean {
  const accept = c.req.header("accept") ?? "";
  if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)) return false;
  return STREAMING_GENERATIONS.has(c.req.header("mcp-protocol-version") ?? "2025-03-26");
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
