import type { FallbackAccess, Principal } from "@toolbus/wire/model/call";
import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { actsAsUser } from "../../connections/credentials";
import { ForbiddenError } from "../../errors";
import type { CatalogList, CatalogStore, Versioned } from "../../ports";
import { mayActAs, requireKnownRole } from "../access";
import {
  type ExclusionReason,
  fallbackReasons,
  resolveMode,
  type Selection,
  select,
} from "./select";

export interface SelectionDeps {
  config: StageConfig;
  catalog: Pick<CatalogStore, "list">;
  capabilities: { list(): Promise<CapabilityStatus[]> };
  /** The principal's connected accounts: read only when a tool acts as its caller. */
  connections?: { list(principalId: string): Promise<{ provider: string; status: string }[]> };
}

export interface SelectionRequest {
  /** Another role to select for: the principal's own or a lower one (400 unknown, 403 above). */
  role?: string | undefined;
  /** Where `role` came from in the request, for the 400's path. */
  rolePath?: string;
  /** Absent or null: the stage's default mode. */
  mode?: string | null | undefined;
  allow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
  /** Narrows the catalog read; selection still judges every tool read (and their fallbacks). */
  filter?: { toolset?: string; category?: string };
}

/** Exclusions that refuse a call; capability ones do not (see `authorizeCall`). */
const BLOCKING = new Set<ExclusionReason>(["disabled", "mode", "role"]);

/**
 * Which tools a principal sees and why, for every surface: the catalog and selection routes,
 * the prompt, agent files, MCP `tools/list` and calls all ask here, so a role is never
 * judged one way in one place and another way in the next.
 */
export class SelectionService {
  constructor(private readonly deps: SelectionDeps) {}

  /** The catalog (as filtered) judged for the principal, with the stored capability statuses. */
  async select(
    principal: Principal,
    request: SelectionRequest = {},
  ): Promise<{
    role: string;
    tools: Versioned<ToolSpec>[];
    /** The catalog read, as listed: what search indexes, by its version. */
    catalog: CatalogList;
    selection: Selection<Versioned<ToolSpec>>;
  }> {
    const { config } = this.deps;
    const role = this.roleToSelectFor(principal, request.role, request.rolePath);
    // Checked before any read: a bad mode costs nothing.
    const mode = resolveMode(config, request.mode);
    const filtered =
      request.filter?.toolset !== undefined || request.filter?.category !== undefined;
    const [catalog, everything, capabilities] = await Promise.all([
      this.deps.catalog.list(request.filter),
      // A tool's fallback may be outside the filter; it is judged all the same.
      filtered ? this.deps.catalog.list() : undefined,
      this.deps.capabilities.list(),
    ]);
    const { tools } = catalog;
    const connected = await this.connected(principal, tools);
    const selection = select({
      config,
      tools,
      ...(everything ? { fallbacks: everything.tools } : {}),
      role,
      mode,
      capabilities,
      ...(connected ? { connected } : {}),
      ...(request.allow ? { allow: request.allow } : {}),
      ...(request.deny ? { deny: request.deny } : {}),
    });
    return { role, tools, catalog, selection };
  }

  /** The providers the principal has a working connection with, read only when a listed tool acts as its caller. */
  private async connected(
    principal: Principal,
    tools: readonly ToolSpec[],
  ): Promise<ReadonlySet<string> | undefined> {
    const { connections, config } = this.deps;
    if (!connections || !tools.some((tool) => actsAsUser(tool, config))) return undefined;
    const mine = await connections.list(principal.id);
    return new Set(mine.filter((c) => c.status === "connected").map((c) => c.provider));
  }

  /**
   * May this principal call this tool in this mode? Returns the mode. Capabilities are left
   * out on purpose: a call to a tool whose capability is missing is still scheduled, and the
   * runtime fails it as `unavailable` or runs its fallback.
   */
  authorizeCall(principal: Principal, spec: ToolSpec, requestedMode?: string): string {
    const { mode, excluded } = select({
      config: this.deps.config,
      tools: [spec],
      role: principal.role,
      mode: requestedMode,
      capabilities: [],
    });
    const reasons = (excluded[0]?.reasons ?? []).filter((reason) => BLOCKING.has(reason));
    if (reasons.length > 0) {
      const why = reasons.map((reason) => blockingReasonText(reason, spec, mode)).join("; ");
      throw new ForbiddenError(`Tool ${spec.id} cannot be called: ${why}.`, {
        details: { reasons },
      });
    }
    return mode;
  }

  /**
   * May `fallback` answer a call to `spec` for this principal in this (resolved) mode? Judged
   * once, when the call is accepted, by the rule selection offers a tool served by its
   * fallback with: the fallback must be enabled, offered in the mode and open to the role.
   * Its capabilities are left to the runtime, which checks them as it runs the fallback (they
   * can change by then). Recorded on the call: the runtime obeys it without judging again.
   */
  fallbackAccess(
    principal: Principal,
    spec: ToolSpec,
    fallback: ToolSpec,
    mode: string,
  ): FallbackAccess {
    const reasons = fallbackReasons(
      { config: this.deps.config, role: principal.role, mode, capabilities: [] },
      fallback,
    ).filter((reason) => BLOCKING.has(reason));
    const allowed =
      reasons.length === 0 && fallback.id === spec.fallback && fallback.id !== spec.id;
    return { tool: fallback.id, allowed, reasons };
  }

  /**
   * The role to select for: the caller's own unless it names another. Looking at what a lower
   * role gets is fine (e.g. to build a viewer's prompt); a higher role's view is not for you.
   * Not to be confused with `requiredRole` (app/access.ts), the role a permission needs.
   */
  roleToSelectFor(principal: Principal, role: string | undefined, path = "role"): string {
    const { config } = this.deps;
    if (role === undefined || role === principal.role) return principal.role;
    requireKnownRole(config, role, path);
    if (!mayActAs(config, principal, role)) {
      throw new ForbiddenError(
        `Your role (${principal.role}) cannot select for ${role}, above it.`,
        {
          details: { requestedRole: role, yourRole: principal.role },
        },
      );
    }
    return role;
  }
}

function blockingReasonText(reason: ExclusionReason, spec: ToolSpec, mode: string): string {
  if (reason === "disabled") return "it is disabled on this stage";
  if (reason === "mode") return `it is not offered in mode ${mode}`;
  return `it needs the ${spec.availability.minRole} role or higher`;
}
