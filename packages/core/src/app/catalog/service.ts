import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import type { CatalogStore, Versioned } from "../../ports";
import { availabilityIssues, refuseIssues } from "./checks";
import { checkToolRegistration } from "./consistency";
import { checkToolsetClaim, registeredElsewhere } from "./ownership";

export interface CatalogServiceDeps {
  catalog: CatalogStore;
  config: StageConfig;
  /** The stage's capability statuses: a tool may only require a capability named there. */
  capabilities: { list(): Promise<CapabilityStatus[]> };
}

/**
 * An administrator's writes to the built-in part of the catalog, with the rules every catalog
 * write obeys (names are global, owners keep their toolsets, registered toolsets are written
 * only by their registration). The HTTP routes and the CLI's server side call this.
 */
export class CatalogService {
  constructor(private readonly deps: CatalogServiceDeps) {}

  async putToolset(spec: ToolsetSpec, expectedRevision?: number): Promise<Versioned<ToolsetSpec>> {
    if (spec.kind !== "builtin") throw registeredElsewhere("toolset", spec.name);
    checkToolsetClaim(await this.deps.catalog.getToolset(spec.name), spec);
    return this.deps.catalog.putToolset(spec, expectedRevision);
  }

  async putTool(spec: ToolSpec, expectedRevision?: number): Promise<Versioned<ToolSpec>> {
    const { catalog, config, capabilities } = this.deps;
    const [toolset, existing, statuses, fallback] = await Promise.all([
      catalog.getToolset(spec.toolset),
      catalog.getTool(spec.id),
      capabilities.list(),
      spec.fallback === undefined ? undefined : catalog.getTool(spec.fallback),
    ]);
    if (spec.implementation.kind !== "builtin" || (toolset && toolset.kind !== "builtin")) {
      throw registeredElsewhere("tool", spec.id);
    }
    checkToolRegistration(spec, {
      toolsets: toolset ? [toolset] : [],
      tools: existing ? [existing] : [],
    });
    // The JSON Schema checks load on the first tool an administrator writes.
    const { toolIssues } = await import("./tool-checks");
    refuseIssues(
      `Tool ${spec.id}`,
      toolIssues(spec, {
        config,
        capabilities: statuses.map((status) => status.name),
        ...(fallback ? { fallback } : {}),
      }),
    );
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

  /**
   * Replaces one tool's availability (enabled, modes, minRole), built-in or registered. Like a
   * disable, it is the administrator's: it survives seeds, refreshes and re-registrations that
   * do not state availability themselves.
   */
  setAvailability(
    id: string,
    availability: ToolSpec["availability"],
    expectedRevision?: number,
  ): Promise<Versioned<ToolSpec>> {
    // The body is the availability itself: its fields are named from its root.
    refuseIssues(
      `The availability of ${id}`,
      availabilityIssues(availability, this.deps.config, ""),
    );
    return this.deps.catalog.setAvailability(id, availability, expectedRevision);
  }
}
