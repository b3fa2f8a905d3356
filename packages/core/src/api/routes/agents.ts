import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { renderedFile, renderRequest } from "../../harness/schemas";
import { requirePermission } from "../../http/auth";
import type { HttpEnv } from "../../http/env";
import type { ApiDeps } from "../deps";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const requestSchema = renderRequest.meta({ id: "AgentRenderRequest" });
const fileSchema = renderedFile.meta({ id: "AgentFile" });
const responseSchema = z.union([fileSchema, z.object({ files: z.array(fileSchema) })]);

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
        200: jsonContent(responseSchema, "The file (or files) with what was dropped or adjusted"),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      // Rendering, with its YAML serializer, loads on this route's first request.
      const { renderAgentFiles } = await import("../../app/agents/render");
      const files = await renderAgentFiles(c.req.valid("json"), {
        selector,
        principal: c.get("principal"),
        mcpUrl: new URL("/mcp", deps.streamUrl ?? c.req.url).href,
      });
      return c.json(files, 200);
    },
  );
}
