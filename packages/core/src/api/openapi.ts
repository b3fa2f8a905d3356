import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "./deps";
import { renderDocs } from "./docs";
import type { ApiEnv } from "./env";

export const API_VERSION = "0.1.0";

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/**
 * `/openapi.json` and `/docs`, both generated from the routes' own zod schemas. Registered
 * last and built on first request, once every route is known; the document never changes
 * while the process lives.
 */
export function registerOpenApi(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
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
    return document;
  };

  app.get("/openapi.json", (c) => c.json(getDocument()));
  app.get("/docs", (c) => {
    docsPage ??= renderDocs(getDocument());
    // The page is self-contained: no scripts at all, only its own inline styles.
    c.header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(docsPage);
  });
}
