import {
  type McpToolsetRegistration,
  mcpToolDefaults,
  mcpToolsetRegistration,
} from "@toolbus/wire/model/registered";
import type { ToolsetSpec } from "@toolbus/wire/model/tool";
import { ConflictError } from "../../errors";

/**
 * The registration a registered MCP toolset was stored with, plus any new renames: what a
 * refresh lists the server with and what held changes are planned with. Registrations from
 * before `updates` existed review their server's changes, the default.
 */
export function storedRegistration(
  toolset: ToolsetSpec,
  renames: Record<string, string> = {},
): McpToolsetRegistration {
  const source = toolset.source;
  if (toolset.kind !== "mcp" || !source) {
    throw new ConflictError(`Toolset ${toolset.name} is not a registered MCP server.`);
  }
  return mcpToolsetRegistration.parse({
    kind: "mcp",
    name: toolset.name,
    description: toolset.description,
    owner: toolset.owner,
    url: source.url,
    ...(source.auth ? { auth: source.auth } : {}),
    renames: { ...source.renames, ...renames },
    defaults: mcpToolDefaults.parse(source.defaults ?? {}),
    updates: source.updates ?? "review",
  });
}
