import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { METRICS_NAMESPACE } from "@toolbus/core/observability/metrics";
import { metricsView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

/**
 * Call counters and latency percentiles. Under `npm start` every handler runs in this process,
 * so the route answers with what it counted since start. On AWS each tool's function writes
 * its own (EMF lines in its log group): no one process has them, so the route says where they
 * are (CloudWatch namespace and the stage's dimension, and the stage's dashboard) rather than
 * answering with one function's share.
 */
export function registerMetricsRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { config, metrics } = deps;
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/metrics",
      tags: ["Observability"],
      summary: "Calls by tool and outcome, failures by kind, cache, rate limits and latency",
      security: bearerSecurity,
      middleware: [requirePermission(config, "admin")] as const,
      responses: {
        200: jsonContent(metricsView, "Counters and latency percentiles, or where they are"),
        ...errorResponses(401, 403),
      },
    }),
    (c) =>
      c.json(
        metrics
          ? { source: "process" as const, ...metrics.snapshot() }
          : {
              source: "cloudwatch" as const,
              cloudwatch: { namespace: METRICS_NAMESPACE, dimensions: { stage: config.stage } },
            },
        200,
      ),
  );
}
