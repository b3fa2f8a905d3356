import {
  type Agent,
  agentFromInput,
  type CatalogContext,
  enricherFromSpec,
  type RenderedAgentFile,
  type RenderRequest,
  render,
  renderAll,
} from "@toolbus/harness";
import type { Principal } from "@toolbus/wire/model/call";
import type { SelectionService } from "../selection/service";

/**
 * The agent file (or, for `harness: "all"`, one per harness) a render request asks for. Its
 * own module: the API loads rendering, with the YAML serializer, on the route's first request.
 */
export async function renderAgentFiles(
  request: RenderRequest,
  context: { selector: SelectionService; principal: Principal; mcpUrl: string },
): Promise<RenderedAgentFile | { files: RenderedAgentFile[] }> {
  const agent = agentFromInput(request.agent);
  const usesCatalog = request.enrichers?.some((spec) => spec.type === "addToolbusCatalog");
  const catalogContext: CatalogContext | undefined = usesCatalog
    ? {
        tools: await availableCatalogTools(context.selector, context.principal, agent),
        defaultUrl: context.mcpUrl,
      }
    : undefined;
  const options = renderOptions(request, catalogContext);
  if (request.harness === "all") return { files: renderAll(agent, options) };
  return render(request.harness, agent, options);
}

function renderOptions(request: RenderRequest, catalogContext: CatalogContext | undefined) {
  return {
    enrichers: (request.enrichers ?? []).map((spec) => enricherFromSpec(spec, catalogContext)),
    ...(request.format ? { format: request.format } : {}),
    ...(request.opencodeTools ? { opencodeTools: request.opencodeTools } : {}),
    ...(request.opencodeMode ? { opencodeMode: request.opencodeMode } : {}),
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
