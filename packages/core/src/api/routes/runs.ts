import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { runBudget, runPolicy } from "../../model/run";
import { requirePermission } from "../auth";
import type { ApiDeps } from "../deps";
import type { ApiEnv } from "../env";
import { bearerSecurity, errorResponses, jsonContent, runIdParam } from "../schemas";

const runParams = z.object({ runId: runIdParam });
const policySchema = runPolicy.meta({ id: "RunPolicy" });
const policyView = z
  .object({
    /** What the run works under: the tighter of the stage's and its own, limit by limit. */
    policy: policySchema,
    runPolicy: policySchema.nullable(),
    stagePolicy: policySchema,
  })
  .openapi("RunPolicies");
const runView = policyView
  .extend({
    runId: z.string(),
    usage: z.object({
      calls: z.number().int(),
      cost: z.number(),
      firstCallAt: z.string().nullable(),
      perTool: z.record(z.string(), z.number().int()),
    }),
    remaining: runBudget,
    calls: z.record(z.string(), z.number().int()),
  })
  .openapi("Run");

/**
 * A run as the platform governs it: `GET /v1/runs/{runId}` (its policy, what it used, what is
 * left, its calls by status) and `PUT /v1/runs/{runId}/policy` (its own limits, set once,
 * tighter than the stage's). Thin: the rules are RunGovernor's.
 */
export function registerRunRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  const { runs: load, calls, config } = deps;
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
        body: { required: true, content: { "application/json": { schema: policySchema } } },
      },
      responses: {
        200: jsonContent(policyView, "The run's policies"),
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
