import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import {
  approvalDecisionBody,
  approvalsQuery,
  approvalsView,
  callView as callViewSchema,
  runPoliciesView,
  runPolicyBody,
  runView,
} from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, callIdParam, errorResponses, jsonContent, runIdParam } from "../schemas";
import { callView } from "../views";

const runParams = z.object({ runId: runIdParam });

/**
 * A run as the platform governs it: `GET /v1/runs/{runId}` (its policy, what it used, what is
 * left, its calls by status) and `PUT /v1/runs/{runId}/policy` (its own limits, set once,
 * tighter than the stage's). Thin: the rules are RunGovernor's.
 */
export function registerRunRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { runs: load, calls, config } = deps;
  registerApprovalRoutes(app, deps);
  if (!load) return;

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/runs/{runId}",
      tags: ["Calls"],
      summary: "A run: its policy, what it used and has left, its calls by status",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: { params: runParams },
      responses: {
        200: jsonContent(runView, "The run"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { runId } = c.req.valid("param");
      const [described, byStatus] = await Promise.all([
        (await load()).describe(runId, new Date()),
        calls.countByStatus(runId),
      ]);
      return c.json({ runId, ...described, calls: byStatus }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/runs/{runId}/policy",
      tags: ["Calls"],
      summary: "Set a run's own limits, once; they may only tighten the stage's",
      security: bearerSecurity,
      middleware: [requirePermission(config, "call")] as const,
      request: {
        params: runParams,
        body: { required: true, content: { "application/json": { schema: runPolicyBody } } },
      },
      responses: {
        200: jsonContent(runPoliciesView, "The run's policies"),
        ...errorResponses(400, 401, 403, 409, 415),
      },
    }),
    async (c) => {
      const { runId } = c.req.valid("param");
      const governor = await load();
      await governor.setPolicy(runId, c.req.valid("json"));
      const { policy, runPolicy: own, stagePolicy } = await governor.describe(runId, new Date());
      return c.json({ policy, runPolicy: own, stagePolicy }, 200);
    },
  );
}

/**
 * Approval of calls the stage says a person must approve: approve or deny one (by a role
 * with the `approve` permission; the decision is stored with who and when, and is final), and
 * list what waits.
 */
function registerApprovalRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { calls, config } = deps;
  for (const verdict of ["approve", "deny"] as const) {
    app.openapi(
      createRoute({
        method: "post",
        path: `/v1/runs/{runId}/calls/{callId}/${verdict}`,
        tags: ["Calls"],
        summary:
          verdict === "approve"
            ? "Approve a call that awaits approval: it runs"
            : "Deny a call that awaits approval: it fails as denied",
        security: bearerSecurity,
        middleware: [requirePermission(config, "approve")] as const,
        request: {
          params: z.object({ runId: runIdParam, callId: callIdParam }),
          body: {
            required: false,
            content: { "application/json": { schema: approvalDecisionBody } },
          },
        },
        responses: {
          200: jsonContent(callViewSchema, "The call, decided"),
          ...errorResponses(400, 401, 403, 404, 409, 415),
        },
      }),
      async (c) => {
        const { runId, callId } = c.req.valid("param");
        // The body is optional: a plain POST approves or denies without a reason.
        const { reason } = (c.req.valid("json") ?? {}) as { reason?: string };
        const call = await calls.decide(
          c.get("principal"),
          { runId, callId },
          { approved: verdict === "approve", reason },
        );
        return c.json(callView(call), 200);
      },
    );
  }

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/approvals",
      tags: ["Calls"],
      summary: "Calls awaiting approval, across runs, the soonest to expire first",
      security: bearerSecurity,
      middleware: [requirePermission(config, "approve")] as const,
      request: { query: approvalsQuery },
      responses: {
        200: jsonContent(approvalsView, "What waits"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const waiting = await calls.awaitingApproval(c.req.valid("query").limit);
      return c.json({ calls: waiting.map(callView) }, 200);
    },
  );
}
