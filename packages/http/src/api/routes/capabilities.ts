import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { capabilitiesView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

export function registerCapabilityRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { capabilities, config } = deps;

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/capabilities",
      tags: ["Capabilities"],
      summary: "What this stage has that tools need, why not, and when it was checked",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      responses: {
        200: jsonContent(capabilitiesView, "Stored capability statuses"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => c.json({ capabilities: await capabilities.list() }, 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/capabilities/refresh",
      tags: ["Capabilities"],
      summary: "Detect and verify every capability again, and store the result",
      security: bearerSecurity,
      middleware: [requirePermission(config, "admin")] as const,
      responses: {
        200: jsonContent(capabilitiesView, "The fresh statuses"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const statuses = await capabilities.refresh();
      c.set("audited", { kind: "capability", id: "*", touched: statuses.map((s) => s.name) });
      return c.json({ capabilities: statuses }, 200);
    },
  );
}
