import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { secureHeaders } from "hono/secure-headers";
import { PayloadTooLargeError } from "../errors";
import { registerMcpRoutes } from "../mcp/route";
import { authenticate } from "./auth";
import type { ApiDeps } from "./deps";
import type { ApiEnv } from "./env";
import { errorHandler, notFoundHandler, validationHook } from "./errors";
import { registerOpenApi } from "./openapi";
import { requestId } from "./request-id";
import { registerAgentRoutes } from "./routes/agents";
import { registerCallRoutes } from "./routes/calls";
import { registerCapabilityRoutes } from "./routes/capabilities";
import { registerCatalogRoutes } from "./routes/catalog";
import { registerEventRoutes } from "./routes/events";
import { registerHealthRoutes } from "./routes/health";
import { registerKeyRoutes } from "./routes/keys";
import { registerRegisteredToolsetRoutes } from "./routes/registered";
import { registerSelectionRoutes } from "./routes/selection";

/** Largest request body accepted, checked before anything parses it. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * The Toolbus HTTPS API: the same app behind API Gateway (hono/aws-lambda) and on the local
 * node server. No CORS unless a stage configures it: browsers are not the intended caller.
 */
export function createApi(deps: ApiDeps): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>({ defaultHook: validationHook });
  app.onError(errorHandler());
  app.notFound(notFoundHandler());

  app.use("*", requestId());
  app.use("*", secureHeaders());
  app.use("/v1/*", authenticate(deps));
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new PayloadTooLargeError("The request body is larger than 256 KB.");
      },
    }),
  );

  registerHealthRoutes(app, deps);
  registerCatalogRoutes(app, deps);
  registerRegisteredToolsetRoutes(app, deps);
  registerCallRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerKeyRoutes(app, deps);
  registerCapabilityRoutes(app, deps);
  registerSelectionRoutes(app, deps);
  registerAgentRoutes(app, deps);
  registerMcpRoutes(app, deps);
  registerOpenApi(app, deps);
  return app;
}
