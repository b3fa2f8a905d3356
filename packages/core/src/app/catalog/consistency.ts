import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { ConflictError, ValidationError } from "../../errors";

/**
 * Checks a tool against the catalog before it is stored: its toolset must exist, and its id
 * must not belong to another toolset. Messages name both owners, so whoever hits a clash
 * knows whom to talk to.
 */
export function checkToolRegistration(
  candidate: ToolSpec,
  catalog: { toolsets: readonly ToolsetSpec[]; tools: readonly ToolSpec[] },
): void {
  const toolset = catalog.toolsets.find((t) => t.name === candidate.toolset);
  if (!toolset) {
    const message = `Tool ${candidate.id} names toolset ${candidate.toolset}, which is not registered.`;
    throw new ValidationError(message, { details: [{ path: "toolset", message }] });
  }
  const existing = catalog.tools.find((t) => t.id === candidate.id);
  if (existing && existing.toolset !== candidate.toolset) {
    const owner = catalog.toolsets.find((t) => t.name === existing.toolset)?.owner ?? "unknown";
    throw new ConflictError(
      `Tool id ${candidate.id} is already registered by toolset ${existing.toolset} (owner ${owner}); toolset ${toolset.name} (owner ${toolset.owner}) cannot register it too.`,
      {
        details: {
          toolId: candidate.id,
          registeredBy: existing.toolset,
          requestedBy: toolset.name,
        },
      },
    );
  }
}

/** Validates a whole catalog at once (the built-in one at start-up): every clash is named. */
export function validateCatalog(
  toolsets: readonly ToolsetSpec[],
  tools: readonly ToolSpec[],
): void {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  for (const toolset of toolsets) {
    const clash = owners.get(toolset.name);
    if (clash !== undefined) {
      problems.push(
        `Toolset ${toolset.name} is declared twice (owners ${clash} and ${toolset.owner}).`,
      );
    }
    owners.set(toolset.name, toolset.owner);
  }
  const seen = new Map<string, string>();
  for (const tool of tools) {
    if (!owners.has(tool.toolset)) {
      problems.push(`Tool ${tool.id} names toolset ${tool.toolset}, which is not declared.`);
    }
    const first = seen.get(tool.id);
    if (first !== undefined) {
      problems.push(
        `Tool id ${tool.id} is declared by toolset ${first} (owner ${owners.get(first)}) and by toolset ${tool.toolset} (owner ${owners.get(tool.toolset)}).`,
      );
    }
    seen.set(tool.id, tool.toolset);
  }
  if (problems.length > 0) {
    throw new ConflictError(`The catalog is not consistent: ${problems.join(" ")}`, {
      details: problems,
    });
  }
}
