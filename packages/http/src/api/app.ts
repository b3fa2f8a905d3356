import { OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { secureHeaders } from "hono/secure-headers";
import { authenticate } from "../common/auth";
import { limitRequestBody, settleRequestBody } from "../common/body";
import type { HttpEnv } from "../common/env";
import { registerConsoleRoutes } from "../console/route";
import { registerMcpRoutes } from "../mcp/route";
import { auditAdminWrites } from "./audit";
import { errorHandler, notFoundHandler, validationHook } from "./errors";
import { registerOpenApi } from "./openapi";
import { requestId } from "./request-id";
import { registerAgentRoutes } from "./routes/agents";
import { registerAuditRoutes } from "./routes/audit";
import { registerCallRoutes } from "./routes/calls";
import { registerCapabilityRoutes } from "./routes/capabilities";
import { registerCatalogRoutes } from "./routes/catalog";
import { registerConnectionRoutes } from "./routes/connections";
import { registerEventRoutes } from "./routes/events";
import { registerHealthRoutes } from "./routes/health";
import { registerKeyRoutes } from "./routes/keys";
import { registerMeRoutes } from "./routes/me";
import { registerMetricsRoutes } from "./routes/metrics";
import { registerOAuthMetadataRoutes } from "./routes/oauth-metadata";
import { registerRegisteredToolsetRoutes } from "./routes/registered";
import { registerRunRoutes } from "./routes/runs";
import { registerSearchRoutes } from "./routes/search";
import { registerSelectionRoutes } from "./routes/selection";
import { registerSubscriptionRoutes } from "./routes/subscriptions";
import { streamedRoutesOnly } from "./streaming";

export { MAX_BODY_BYTES } from "../common/body";

/**
 * The Toolbus HTTPS API: the same app behind API Gateway (hono/aws-lambda) and on the local
 * node server. No CORS unless a stage configures it: browsers are not the intended caller.
 */
export function createApi(deps: ApiDeps): OpenAPIHono<HttpEnv> {
  const app = new OpenAPIHono<HttpEnv>({ defaultHook: validationHook });
  app.onError(errorHandler());
  app.notFound(notFoundHandler());

  // First in, last out: whatever answered early, the connection is left ready for the next.
  app.use("*", settleRequestBody());
  app.use("*", requestId(deps.log));
  app.use("*", secureHeaders());
  if (deps.surface === "streaming") app.use("*", streamedRoutesOnly());
  app.use("/v1/*", authenticate(deps));
  app.use("/v1/*", limitRequestBody());
  app.use("/v1/*", auditAdminWrites(deps.audit));

  registerHealthRoutes(app, deps);
  registerOAuthMetadataRoutes(app, deps.config);
  // Before the catalog's /v1/tools/{id}: /v1/tools/search is the search.
  registerSearchRoutes(app, deps);
  registerCatalogRoutes(app, deps);
  registerRegisteredToolsetRoutes(app, deps);
  registerCallRoutes(app, deps);
  registerRunRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerKeyRoutes(app, deps);
  registerMeRoutes(app, deps);
  registerCapabilityRoutes(app, deps);
  registerMetricsRoutes(app, deps);
  registerAuditRoutes(app, deps);
  registerSubscriptionRoutes(app, deps);
  // /v1/connections, and /connect/{provider} for browsers: only where the stage has connections.
  registerConnectionRoutes(app, deps);
  registerSelectionRoutes(app, deps);
  registerAgentRoutes(app, deps);
  registerMcpRoutes(app, deps);
  registerOpenApi(app, deps);
  registerConsoleRoutes(app, deps.config);
  return app;
}
