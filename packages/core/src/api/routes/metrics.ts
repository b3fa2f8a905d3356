import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requirePermission } from "../../http/auth";
import type { HttpEnv } from "../../http/env";
import { METRICS_NAMESPACE } from "../../observability/metrics";
import type { ApiDeps } from "../deps";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const dimensions = z.record(z.string(), z.string());
const metricsSchema = z
  .object({
    /** Counted here (`npm start`), or in CloudWatch (AWS: one function per tool). */
    source: z.enum(["process", "cloudwatch"]),
    since: z.string().optional(),
    counters: z.array(z.object({ name: z.string(), dimensions, value: z.number() })).optional(),
    latencies: z
      .array(
        z.object({
          name: z.string(),
          dimensions,
          count: z.number(),
          p50: z.number(),
          p90: z.number(),
          p99: z.number(),
          max: z.number(),
        }),
      )
      .optional(),
    /** On AWS: where the same metrics are. */
    cloudwatch: z.object({ namespace: z.string(), dimensions }).optional(),
  })
  .openapi("Metrics");

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
        200: jsonContent(metricsSchema, "Counters and latency percentiles, or where they are"),
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
