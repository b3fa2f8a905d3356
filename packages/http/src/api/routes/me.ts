import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { permissionsOf } from "@toolbus/core/app/access";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { meView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";
import { keyView } from "../views";
import { servesConnections } from "./connections";

const me = (deps: ApiDeps) =>
  createRoute({
    method: "get",
    path: "/v1/me",
    tags: ["Keys"],
    summary: "Who the caller is and what its role may do",
    description:
      "Any valid key or token may ask. A client such as the console shows and offers only what `permissions` grants; the API checks every request again all the same.",
    security: bearerSecurity,
    // Every role reads; stated so the document and the table of roles say it like every route.
    middleware: [requirePermission(deps.config, "read")] as const,
    responses: {
      200: jsonContent(meView, "The caller"),
      ...errorResponses(401, 403),
    },
  });

export function registerMeRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  app.openapi(me(deps), (c) => {
    const principal = c.get("principal");
    const key = c.get("apiKey");
    c.header("cache-control", "no-store");
    return c.json(
      {
        id: principal.id,
        role: principal.role,
        kind: principal.issuer === undefined ? ("key" as const) : ("oauth" as const),
        permissions: permissionsOf(deps.config, principal),
        roles: [...deps.config.roles],
        connections: servesConnections(deps),
        ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
        ...(key ? { key: keyView(key) } : {}),
        ...(deps.streamUrl ? { streamUrl: deps.streamUrl } : {}),
      },
      200,
    );
  });
}
