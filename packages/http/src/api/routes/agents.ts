import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { renderRequest } from "@toolbus/harness/schemas";
import { renderedAgentView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

// The request is harness's own: its vocabulary (tools, enrichers, formats) lives there.
const requestSchema = renderRequest.meta({ id: "AgentRenderRequest" });

export function registerAgentRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { config } = deps;
  const selector = deps.selection;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/agents/render",
      tags: ["Agent files"],
      summary: "Render an agent file for Claude Code, OpenCode or GitHub Copilot",
      description:
        "Tools are `Read`, `Bash`, `Todo`, `custom:<name>` or `mcp:<server>/<tool>`. `harness: \"all\"` returns `{ files }`, one per harness. Enrichers run left to right; `addToolbusCatalog` adds the catalog's optional tools available in the agent's mode and role as tools of Toolbus's MCP server, with the API key (`apiKeyEnv`, default `TOOLBUS_API_KEY`) and the run id (`runIdEnv`, default `TOOLBUS_RUN_ID`) read from the environment in the harness's own syntax. Where the harness reads MCP servers from a project file (Claude Code's `.mcp.json`, OpenCode's `opencode.json`), the file comes back as `mcpServersFile`.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "read")] as const,
      request: {
        body: { required: true, content: { "application/json": { schema: requestSchema } } },
      },
      responses: {
        200: jsonContent(
          renderedAgentView,
          "The file (or files) with what was dropped or adjusted",
        ),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      // Rendering, with its YAML serializer, loads on this route's first request.
      const { renderAgentFiles } = await import("@toolbus/core/app/agents/render");
      const files = await renderAgentFiles(c.req.valid("json"), {
        selector,
        principal: c.get("principal"),
        mcpUrl: new URL("/mcp", deps.streamUrl ?? c.req.url).href,
      });
      return c.json(files, 200);
    },
  );
}
