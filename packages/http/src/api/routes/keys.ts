import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requireKnownRole } from "@toolbus/core/app/access";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { apiKeyBody, apiKeyCreatedView, apiKeyListView, apiKeyView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent, keyIdParam } from "../schemas";
import { keyView } from "../views";

export function registerKeyRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { keys, config } = deps;
  const admin = requirePermission(config, "admin");

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/keys",
      tags: ["Keys"],
      summary: "Create an API key",
      description: "The key is in this response and nowhere else; only its hash is stored.",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        body: { required: true, content: { "application/json": { schema: apiKeyBody } } },
      },
      responses: {
        201: jsonContent(apiKeyCreatedView, "The new key"),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const { name, role, actsFor } = c.req.valid("json");
      requireKnownRole(config, role);
      const { key, record } = await keys.create({ name, role, ...(actsFor ? { actsFor } : {}) });
      c.set("audited", { kind: "key", id: record.keyId, name: record.name, role: record.role });
      c.header("Location", `/v1/keys/${record.keyId}`);
      return c.json(
        {
          key,
          keyId: record.keyId,
          name: record.name,
          role: record.role,
          createdAt: record.createdAt,
          ...(record.actsFor ? { actsFor: true } : {}),
        },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/keys",
      tags: ["Keys"],
      summary: "List API keys (never the keys themselves)",
      security: bearerSecurity,
      middleware: [admin] as const,
      responses: {
        200: jsonContent(apiKeyListView, "Key records"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => c.json({ keys: (await keys.list()).map(keyView) }, 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/keys/{keyId}",
      tags: ["Keys"],
      summary: "Revoke an API key",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: { params: z.object({ keyId: keyIdParam }) },
      responses: {
        200: jsonContent(apiKeyView, "The revoked key's record"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { keyId } = c.req.valid("param");
      const record = await keys.revoke(keyId);
      c.set("audited", { kind: "key", id: record.keyId, name: record.name, role: record.role });
      return c.json(keyView(record), 200);
    },
  );
}
