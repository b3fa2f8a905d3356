import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { statusUrl } from "@toolbus/core/app/calls/status";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { NotFoundError } from "@toolbus/core/errors";
import {
  callAcceptedView,
  callBody,
  callView as callViewSchema,
  traceCallsView,
  traceQuery,
} from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, callIdParam, errorResponses, jsonContent, runIdParam } from "../schemas";
import { callView } from "../views";

const runParams = z.object({ runId: runIdParam });
const callParams = z.object({ runId: runIdParam, callId: callIdParam });
const traceParams = z.object({
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/, "a W3C trace id: 32 lowercase hex digits")
    .meta({ example: "4bf92f3577b34da6a3ce929d0e0e4736" }),
});

export function registerCallRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { calls, config } = deps;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/runs/{runId}/calls",
      tags: ["Calls"],
      summary: "Call a tool under a run",
      description:
        "Validates the input against the tool's schema, records the call once per callId and announces ToolCallScheduled. With `wait` (seconds; default and cap from the stage) a finished call comes back as 200; otherwise 202 with a status URL. Repeating a request with the same callId and input returns the same call.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "call")] as const,
      request: {
        params: runParams,
        body: {
          required: true,
          content: { "application/json": { schema: callBody } },
        },
      },
      responses: {
        200: jsonContent(callViewSchema, "The call finished (succeeded or failed)"),
        202: {
          ...jsonContent(callAcceptedView, "Scheduled; poll statusUrl (also in Location)"),
          headers: z.object({ Location: z.string() }),
        },
        ...errorResponses(400, 401, 403, 404, 409, 413, 415, 503),
      },
    }),
    async (c) => {
      const { runId } = c.req.valid("param");
      const outcome = await calls.call(
        c.get("principal"),
        runId,
        c.req.valid("json"),
        c.req.header("traceparent"),
      );
      if (outcome.finished) return c.json(callView(outcome.call), 200);
      const { call, statusUrl } = outcome;
      c.header("Location", statusUrl);
      return c.json({ callId: call.callId, status: call.status, statusUrl }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/runs/{runId}/calls/{callId}",
      tags: ["Calls"],
      summary: "Get a call and, once finished, its result",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: { params: callParams },
      responses: {
        200: jsonContent(callViewSchema, "The call"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { runId, callId } = c.req.valid("param");
      const call = await calls.get(runId, callId);
      if (!call) throw new NotFoundError(`Call ${callId} does not exist in run ${runId}.`);
      return c.json(callView(call), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/runs/{runId}/calls/{callId}/cancel",
      tags: ["Calls"],
      summary: "Ask a call to stop",
      description:
        "For the call's caller or an administrator. A call not started yet (waiting, or waiting for approval) fails `cancelled` at once: 200. A running call's tool is asked to stop through its abort signal, wherever it runs: 202, and the call ends `cancelled` (its ToolResultReceived published like any other) unless it finishes first. Asking again is harmless. A finished call stays as it finished: 409 with its status.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "call")] as const,
      request: { params: callParams },
      responses: {
        200: jsonContent(callViewSchema, "Cancelled before it started"),
        202: jsonContent(callViewSchema, "Asked to stop: follow it at its status URL"),
        ...errorResponses(400, 401, 403, 404, 409),
      },
    }),
    async (c) => {
      const { runId, callId } = c.req.valid("param");
      const { outcome, call } = await calls.cancel(c.get("principal"), { runId, callId });
      if (outcome === "cancelled") return c.json(callView(call), 200);
      c.header("Location", statusUrl(call));
      return c.json(callView(call), 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/traces/{traceId}",
      tags: ["Calls"],
      summary: "Find the calls made under a W3C trace",
      description:
        "Every call carries the trace it was made under: the caller's `traceparent` (REST header or MCP `_meta.traceparent`), or one Toolbus started. The calls of one trace, across runs, oldest first.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: { params: traceParams, query: traceQuery },
      responses: {
        200: jsonContent(traceCallsView, "The trace's calls (none when the trace is unknown)"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { traceId } = c.req.valid("param");
      const found = await calls.byTrace(traceId, c.req.valid("query").limit);
      return c.json({ traceId, calls: found.map(callView) }, 200);
    },
  );
}
