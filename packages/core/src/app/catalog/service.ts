import type { ToolSpec, ToolsetSpec } from "../../model/tool";
import type { CatalogStore, Versioned } from "../../ports";
import { checkToolsetClaim, registeredElsewhere } from "./ownership";
import { checkToolRegistration } from "./registration";

/**
 * An administrator's writes to the built-in part of the catalog, with the rules every catalog
 * write obeys (names are global, owners keep their toolsets, registered toolsets are written
 * only by their registration). The HTTP routes and the CLI's server side call this.
 */
export class CatalogService {
  constructor(private readonly deps: { catalog: CatalogStore }) {}

  async putToolset(spec: ToolsetSpec, expectedRevision?: number): Promise<Versioned<ToolsetSpec>> {
    if (spec.kind !== "builtin") throw registeredElsewhere("toolset", spec.name);
    checkToolsetClaim(await this.deps.catalog.getToolset(spec.name), spec);
    return this.deps.catalog.putToolset(spec, expectedRevision);
  }

  async putTool(spec: ToolSpec, expectedRevision?: number): Promise<Versioned<ToolSpec>> {
    const [toolset, existing] = await Promise.all([
      this.deps.catalog.getToolset(spec.toolset),
      this.deps.catalog.getTool(spec.id),
    ]);
    if (spec.implementation.kind !== "builtin" || (toolset && toolset.kind !== "builtin")) {
      throw registeredElsewhere("tool", spec.id);
    }
    checkToolRegistration(spec, {
      toolsets: toolset ? [toolset] : [],
      tools: existing ? [existing] : [],
    });
    return this.deps.catalog.putTool(spec, expectedRevision);
  }

  /** Enables or disables a tool on this stage; the choice survives seeds and re-registration. */
  setEnabled(
    id: string,
    enabled: boolean,
    expectedRevision?: number,
  ): Promise<Versioned<ToolSpec>> {
    return this.deps.catalog.setEnabled(id, enabled, expectedRevision);
  }
}
