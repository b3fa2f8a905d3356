import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { SelectionService } from "../../app/selection/service";
import {
  type Agent,
  agentFromInput,
  type CatalogContext,
  enricherFromSpec,
  type RenderRequest,
  render,
  renderAll,
  renderedFile,
  renderRequest,
} from "../../harness";
import type { Principal } from "../../model/call";
import { requirePermission } from "../auth";
import type { ApiDeps } from "../deps";
import type { ApiEnv } from "../env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const requestSchema = renderRequest.meta({ id: "AgentRenderRequest" });
const fileSchema = renderedFile.meta({ id: "AgentFile" });
const responseSchema = z.union([fileSchema, z.object({ files: z.array(fileSchema) })]);

export function registerAgentRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  const { config } = deps;
  const selector = new SelectionService(deps);

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
      const body = c.req.valid("json");
      const agent = agentFromInput(body.agent);
      const usesCatalog = body.enrichers?.some((spec) => spec.type === "addToolbusCatalog");
      const catalogContext: CatalogContext | undefined = usesCatalog
        ? {
            tools: await availableCatalogTools(selector, c.get("principal"), agent),
            defaultUrl: new URL("/mcp", c.req.url).href,
          }
        : undefined;
      const options = renderOptions(body, catalogContext);
      if (body.harness === "all") return c.json({ files: renderAll(agent, options) }, 200);
      return c.json(render(body.harness, agent, options), 200);
    },
  );
}

function renderOptions(body: RenderRequest, catalogContext: CatalogContext | undefined) {
  return {
    enrichers: (body.enrichers ?? []).map((spec) => enricherFromSpec(spec, catalogContext)),
    ...(body.format ? { format: body.format } : {}),
    ...(body.opencodeTools ? { opencodeTools: body.opencodeTools } : {}),
    ...(body.opencodeMode ? { opencodeMode: body.opencodeMode } : {}),
  };
}

/**
 * The catalog's optional tools this agent may use, by the same selection as everywhere else:
 * its mode (default: the stage's) and its role (default: the caller's, never above it).
 */
async function availableCatalogTools(
  selector: SelectionService,
  principal: Principal,
  agent: Agent,
): Promise<string[]> {
  const { tools, selection } = await selector.select(principal, {
    role: agent.role,
    rolePath: "agent.role",
    mode: agent.mode ?? null,
  });
  const available = new Set(selection.available.map((tool) => tool.id));
  // Catalog order (toolset, then id), so the file lists tools the way the catalog does.
  return tools
    .filter((tool) => tool.optionality === "optional" && available.has(tool.id))
    .map((tool) => tool.id);
}
