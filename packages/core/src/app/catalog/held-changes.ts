import type { ToolDefinitionsChanged } from "@toolbus/wire/model/events";
import type {
  HeldReview,
  HeldToolChange,
  McpToolsetRegistration,
} from "@toolbus/wire/model/registered";
import type { ToolSpec, ToolUpdates } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type { CatalogStore, EventSink } from "../../ports";
import type { McpProtocol, RemoteDiscovery } from "../../registered/mcp-client";
import {
  applyHeld,
  describeReview,
  type HeldChangeView,
  holdChanges,
  rejectHeld,
  remoteNameOf,
} from "../../registered/pin";
import { checkIdsFree, mcpToolsetPlan, withAvailability } from "../../registered/plan";
import { canonicalJson, sha256Hex } from "../../util/canonical-json";
import { highestRole } from "../access";
import { storedRegistration } from "./stored-registration";

/** Tool ids whose change waits for review, by kind. */
export interface HeldSummary {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface ToolsetReview {
  toolset: string;
  updates: ToolUpdates;
  revision: number;
  pending: HeldChangeView[];
  rejected: HeldChangeView[];
}

export interface HeldChangesDeps {
  catalog: CatalogStore;
  config: StageConfig;
  /** Where changed tool definitions are announced (ToolDefinitionsChanged). */
  events: EventSink;
  now?: () => Date;
}

/** Where an administrator reads a toolset's held changes (the API's route, for events). */
const REVIEW_PATH_PREFIX = "/v1/registered-toolsets";

/**
 * The review of registered MCP servers' changed tool definitions (pin.ts decides what is
 * held): what a refresh holds and announces, and an administrator's reading, accepting and
 * rejecting. Loaded on a refresh or a review only, never on a call's path.
 */
export class HeldChanges {
  constructor(private readonly deps: HeldChangesDeps) {}

  /**
   * What a refresh stores: with "review", the pins where the server changed and the held
   * review; with "follow", the server's tools. `announce` runs once the write succeeded and
   * says what waits. While anything waits it is announced again under a key of what waits,
   * so a retried refresh's announcement is deduped by its consumers.
   */
  async onRefresh(
    registration: McpToolsetRegistration,
    before: readonly ToolSpec[],
    planned: ToolSpec[],
    discovered: RemoteDiscovery,
  ): Promise<{
    tools: ToolSpec[];
    review: HeldReview | null;
    announce: () => Promise<HeldSummary>;
  }> {
    const held = holdChanges({
      pinned: before,
      planned,
      remote: discovered.tools,
      previous: await this.deps.catalog.getReview(registration.name),
      protocols: discovered.protocols,
      now: this.#now().toISOString(),
      plan: (declared) =>
        withProtocolsOf(mcpToolsetPlan(registration, declared).tools, discovered.protocols),
    });
    const found = held.review?.changes ?? [];
    const ids = idsByRemoteName([...before, ...planned]);
    if (registration.updates === "follow") {
      return {
        tools: planned,
        review: null,
        announce: async () => {
          if (found.length > 0) {
            await this.#announce(registration.name, "followed", summarize(found, ids), found);
          }
          return emptySummary();
        },
      };
    }
    const pending = found.filter((change) => change.state === "pending");
    return {
      tools: held.served,
      review: held.review ?? null,
      announce: async () => {
        const summary = summarize(pending, ids);
        if (pending.length > 0) await this.#announce(registration.name, "held", summary, pending);
        return summary;
      },
    };
  }

  /** What is held for review on a registered MCP toolset, change by change. */
  async review(name: string): Promise<ToolsetReview> {
    const { toolset, registration, tools, held, plan } = await this.#reviewed(name);
    const changes = describeReview(held, tools, plan);
    return {
      toolset: name,
      updates: registration.updates,
      revision: toolset.revision,
      pending: changes.filter((change) => change.state === "pending"),
      rejected: changes.filter((change) => change.state === "rejected"),
    };
  }

  /**
   * Serves the chosen pending changes (all when `ids` is absent): the toolset's tools are
   * written as the server declares them, with today's registration and each tool's
   * availability, in one write that also takes them off the review.
   */
  async accept(
    name: string,
    ids: readonly string[] | undefined,
    expectedRevision?: number,
  ): Promise<{ decided: string[]; review: ToolsetReview }> {
    const { toolset, registration, tools, held, plan } = await this.#reviewed(
      name,
      expectedRevision,
    );
    const chosen = choose(name, tools, held, plan, ids);
    if (!held || chosen.size === 0) return { decided: [], review: await this.review(name) };
    const applied = applyHeld({ served: tools, review: held, chosen, plan });
    const next = withAvailability(registration, applied.tools, tools, {
      adminsOnly: highestRole(this.deps.config),
      keepAvailability: true,
    });
    checkIdsFree(toolset, next, await this.deps.catalog.list());
    const { revision: _revision, updatedAt: _updatedAt, ...spec } = toolset;
    await this.deps.catalog.replaceToolset(spec, next, {
      review: applied.remaining ?? null,
      expectedRevision: toolset.revision,
    });
    const summary = summarize(applied.accepted, idsByRemoteName([...tools, ...next]));
    await this.#announce(name, "accepted", summary, applied.accepted);
    return { decided: summaryIds(summary), review: await this.review(name) };
  }

  /**
   * Rejects the chosen pending changes (all when `ids` is absent): the pins stay served, and
   * the same change found again is not held again; a different change of that tool is.
   */
  async reject(
    name: string,
    ids: readonly string[] | undefined,
    expectedRevision?: number,
  ): Promise<{ decided: string[]; review: ToolsetReview }> {
    const { toolset, tools, held, plan } = await this.#reviewed(name, expectedRevision);
    const chosen = choose(name, tools, held, plan, ids);
    if (!held || chosen.size === 0) return { decided: [], review: await this.review(name) };
    const { review, rejected } = rejectHeld(held, chosen);
    await this.deps.catalog.setReview(name, review, toolset.revision);
    const summary = summarize(rejected, idsByRemoteName(tools));
    await this.#announce(name, "rejected", summary, rejected);
    return { decided: summaryIds(summary), review: await this.review(name) };
  }

  /** A registered MCP toolset with its registration, tools, held review and planning. */
  async #reviewed(name: string, expectedRevision?: number) {
    const toolset = await this.deps.catalog.getToolset(name);
    if (!toolset) throw new NotFoundError(`Toolset ${name} does not exist.`);
    if (toolset.kind !== "mcp" || !toolset.source) {
      throw new ConflictError(
        `Toolset ${name} is a ${toolset.kind} toolset; only registered MCP servers have definitions to review.`,
      );
    }
    if (expectedRevision !== undefined && toolset.revision !== expectedRevision) {
      throw new ConflictError(
        `The toolset ${name} is at revision ${toolset.revision}, not ${expectedRevision}.`,
        {
          details: { currentRevision: toolset.revision, expectedRevision },
          context: { toolset: name },
        },
      );
    }
    const [{ tools }, held] = await Promise.all([
      this.deps.catalog.list({ toolset: name }),
      this.deps.catalog.getReview(name),
    ]);
    const registration = storedRegistration(toolset);
    // The server's held declarations, planned as a refresh would plan them today.
    const plan = (declared: RemoteDiscovery["tools"]) =>
      declared.length === 0
        ? []
        : withProtocolsOf(mcpToolsetPlan(registration, declared).tools, held?.protocols);
    return { toolset, registration, tools, held, plan };
  }

  async #announce(
    toolset: string,
    outcome: ToolDefinitionsChanged["outcome"],
    summary: HeldSummary,
    changes: readonly HeldToolChange[],
  ): Promise<void> {
    const prints = changes.map((change) => change.fingerprint).sort();
    const detail: ToolDefinitionsChanged = {
      eventKey: `catalog/${toolset}/${outcome}/${sha256Hex(canonicalJson(prints)).slice(0, 24)}`,
      toolset,
      outcome,
      ...summary,
      occurredAt: this.#now().toISOString(),
      review: `${REVIEW_PATH_PREFIX}/${toolset}/review`,
    };
    await this.deps.events.publish([{ detailType: "ToolDefinitionsChanged", detail }]);
  }

  #now(): Date {
    return this.deps.now?.() ?? new Date();
  }
}

/** Tools of an MCP server, each recording the generations the server speaks. */
export function withProtocolsOf(
  tools: ToolSpec[],
  protocols: readonly string[] | undefined,
): ToolSpec[] {
  if (!protocols || protocols.length === 0) return tools;
  const spoken = [...protocols] as McpProtocol[];
  return tools.map((tool) =>
    tool.implementation.kind === "mcp"
      ? { ...tool, implementation: { ...tool.implementation, protocols: spoken } }
      : tool,
  );
}

/** The remote names of the pending changes `ids` names (all when absent); 400 for any other id. */
function choose(
  name: string,
  tools: readonly ToolSpec[],
  held: HeldReview | undefined,
  plan: (declared: RemoteDiscovery["tools"]) => ToolSpec[],
  ids: readonly string[] | undefined,
): Set<string> {
  const pending = describeReview(held, tools, plan).filter((change) => change.state === "pending");
  if (ids === undefined) return new Set(pending.map((change) => change.remoteName));
  const byId = new Map(pending.map((change) => [change.id, change.remoteName]));
  const unknown = ids.filter((id) => !byId.has(id));
  if (unknown.length > 0) {
    const waiting = [...byId.keys()].join(", ") || "none";
    throw new ValidationError(
      `No pending change of toolset ${name} for ${unknown.join(", ")}; pending: ${waiting}.`,
      { details: unknown.map((id) => ({ path: "tools", message: `${id} has no pending change` })) },
    );
  }
  return new Set(ids.map((id) => byId.get(id) ?? id));
}

/** Each tool's id here, by the server's name for it (later tools win). */
function idsByRemoteName(tools: readonly ToolSpec[]): Map<string, string> {
  return new Map(tools.map((tool) => [remoteNameOf(tool), tool.id]));
}

function summarize(
  changes: readonly HeldToolChange[],
  ids: ReadonlyMap<string, string>,
): HeldSummary {
  const summary = emptySummary();
  for (const change of changes) {
    summary[change.change].push(ids.get(change.remoteName) ?? change.remoteName);
  }
  for (const list of Object.values(summary)) list.sort();
  return summary;
}

const emptySummary = (): HeldSummary => ({ added: [], changed: [], removed: [] });
const summaryIds = (summary: HeldSummary) =>
  [...summary.added, ...summary.changed, ...summary.removed].sort();
