import type { OpenAPIHono } from "@hono/zod-openapi";
import { requiredRole } from "@toolbus/core/app/access";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { permissionOf } from "../common/auth";
import type { HttpEnv } from "../common/env";
import { API_VERSION } from "../common/version";

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/**
 * `/openapi.json` and `/docs`, both generated from the routes' own zod schemas. Registered
 * last and built on first request, once every route is known; the document never changes
 * while the process lives.
 */
export function registerOpenApi(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: Authorization: Bearer <key>",
  });

  let document: OpenApiDocument | undefined;
  let docsPage: string | undefined;
  const getDocument = () => {
    document ??= app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Toolbus",
        version: API_VERSION,
        description: `Optional tools for AI agents: catalog, calls and run events. Stage: ${deps.config.stage}.`,
      },
      security: [{ bearerAuth: [] }],
    });
    describePermissions(app, deps, document);
    return document;
  };

  app.get("/openapi.json", (c) => c.json(getDocument()));
  app.get("/docs", async (c) => {
    // The page's renderer loads on its first request: a browser's, never an agent's.
    const { renderDocs } = await import("./docs");
    docsPage ??= renderDocs(getDocument());
    // The page is self-contained: no scripts at all, only its own inline styles.
    c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(docsPage);
  });
}

/**
 * Each operation says who may call it, from the middleware that enforces it (so the two
 * cannot differ): `x-toolbus-permission` (`read`, `call`, `admin`, or `public`),
 * `x-toolbus-role` (the lowest role this stage grants it to), and a sentence in the
 * description.
 */
function describePermissions(
  app: OpenAPIHono<HttpEnv>,
  deps: ApiDeps,
  document: OpenApiDocument,
): void {
  // Hono keeps each handler of a route (its middleware included) as an entry of its own.
  const required = new Map<string, ReturnType<typeof permissionOf>>();
  for (const { method, path, handler } of app.routes) {
    const permission = permissionOf(handler);
    const template = path.replaceAll(/:([^/]+)/g, "{$1}");
    if (permission) required.set(`${method.toLowerCase()} ${template}`, permission);
  }
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, value] of Object.entries(item ?? {})) {
      if (typeof value !== "object" || value === null || !("responses" in value)) continue;
      const operation = value as Record<string, unknown> & { description?: string };
      const permission = required.get(`${method} ${path}`);
      if (!permission) {
        operation["x-toolbus-permission"] = "public";
        continue;
      }
      const role = requiredRole(deps.config, permission);
      operation["x-toolbus-permission"] = permission;
      operation["x-toolbus-role"] = role;
      const rule = `Needs the \`${role}\` role or higher (the stage's \`${permission}\` permission).`;
      operation.description = operation.description ? `${operation.description}\n\n${rule}` : rule;
    }
  }
}
