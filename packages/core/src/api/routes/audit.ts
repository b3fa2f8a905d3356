import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requirePermission } from "../../http/auth";
import type { HttpEnv } from "../../http/env";
import { auditEntry } from "../../model/audit";
import type { ApiDeps } from "../deps";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const pageSchema = z
  .object({ entries: z.array(auditEntry), cursor: z.string().nullable() })
  .openapi("AuditPage");
const query = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

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
      request: { query },
      responses: {
        200: jsonContent(pageSchema, "A page of audit entries; `cursor` reads the next"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      return c.json(await audit.list({ limit, ...(cursor ? { cursor } : {}) }), 200);
    },
  );
}
