import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps";
import type { ApiEnv } from "../env";
import { healthSchema, jsonContent } from "../schemas";

const health = createRoute({
  method: "get",
  path: "/health",
  tags: ["Health"],
  summary: "Liveness and the stage's name",
  security: [],
  responses: { 200: jsonContent(healthSchema, "The API is up") },
});

export function registerHealthRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(health, (c) => c.json({ status: "ok" as const, stage: deps.config.stage }, 200));
}
