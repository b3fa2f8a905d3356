import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { auditPageView, auditQuery } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

/** Who changed the catalog, keys and registered toolsets, newest first. */
export function registerAuditRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { audit, config } = deps;
  if (!audit) return;
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/audit",
      tags: ["Observability"],
      summary: "Admin writes, newest first: who, what, on which target, from and to which version",
      security: bearerSecurity,
      middleware: [requirePermission(config, "admin")] as const,
      request: { query: auditQuery },
      responses: {
        200: jsonContent(auditPageView, "A page of audit entries; `cursor` reads the next"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await audit.list({ limit, ...(cursor ? { cursor } : {}) }), 200);
    },
  );
}
