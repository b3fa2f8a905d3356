import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { healthView } from "@toolbus/wire/schemas";
import type { HttpEnv } from "../../common/env";
import { jsonContent } from "../schemas";

const health = createRoute({
  method: "get",
  path: "/health",
  tags: ["Health"],
  summary: "Whether the API and each dependency answer now",
  description:
    "DynamoDB and the event bus are each asked (a read of nothing, DescribeEventBus) with a 1 s bound; a report is reused for 1 s. 503 when any dependency does not answer: every call would then be refused too.",
  security: [],
  responses: {
    200: jsonContent(healthView, "The API and every dependency answer"),
    503: jsonContent(healthView, "A dependency does not answer; `dependencies` says which"),
  },
});

export function registerHealthRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  app.openapi(health, async (c) => {
    const stage = deps.config.stage;
    const streamUrl = deps.streamUrl ? { streamUrl: deps.streamUrl } : {};
    if (!deps.health) return c.json({ status: "ok" as const, stage, ...streamUrl }, 200);
    const report = await deps.health.report();
    const body = { ...report, stage, ...streamUrl };
    c.header("cache-control", "no-store");
    return report.status === "ok" ? c.json(body, 200) : c.json(body, 503);
  });
}
