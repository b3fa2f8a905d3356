import type { OpenAPIHono } from "@hono/zod-openapi";
import type { StageConfig } from "@toolbus/core/config";
import type { Context } from "hono";
import { PROTECTED_RESOURCE_PATH } from "../../common/challenge";
import type { HttpEnv } from "../../common/env";

/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): how an MCP client that got a 401 learns
 * which authorization server to sign in with and which resource to ask a token for. Served at
 * the well-known path and at the path-suffixed form for the configured resource (`…/mcp`),
 * which the MCP SDKs try first. Absent (404) when the stage has no `auth.oauth`.
 */
export function registerOAuthMetadataRoutes(app: OpenAPIHono<HttpEnv>, config: StageConfig): void {
  const oauth = config.auth?.oauth;
  if (!oauth) return;
  const metadata = {
    resource: oauth.resource,
    authorization_servers: [oauth.issuer],
    ...(oauth.scopesSupported ? { scopes_supported: oauth.scopesSupported } : {}),
    bearer_methods_supported: ["header"],
    resource_name: `Toolbus (${config.stage})`,
  };
  const serve = (c: Context<HttpEnv>) => {
    // Public and the same for everyone: a browser-based client may read it from its own page.
    c.header("Access-Control-Allow-Origin", "*");
    c.header("Cache-Control", "public, max-age=300");
    return c.json(metadata, 200);
  };
  const resourcePath = new URL(oauth.resource).pathname.replace(/\/$/, "");
  app.get(PROTECTED_RESOURCE_PATH, serve);
  if (resourcePath !== "") app.get(`${PROTECTED_RESOURCE_PATH}${resourcePath}`, serve);
}
