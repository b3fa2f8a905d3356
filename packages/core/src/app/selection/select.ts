import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import { CATEGORIES, type ToolSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { actsAsUser } from "../../connections/credentials";
import { ValidationError } from "../../errors";
import { roleAtLeast } from "../access";

/**
 * Why a tool is not offered. Machine-readable and stable: agents and dashboards branch on
 * these strings, so they are part of the API.
 */
export type ExclusionReason =
  | "disabled"
  | "mode"
  | "role"
  | `capability:${string}`
  | "denied"
  | "not_allowed";

export interface ExcludedTool {
  tool: string;
  /** Every reason that applies, in the order of ExclusionReason above. */
  reasons: ExclusionReason[];
  /**
   * Set when the tool lacks only capabilities and names a fallback that cannot serve in its
   * place: the fallback's own reasons, and `capability:<fallback>` when the stage says it has
   * nothing to serve (static_links without links). See `fallbackReasons`.
   */
  fallbackReasons?: ExclusionReason[];
}

/** A tool offered although it cannot run itself: its fallback answers its calls. */
export interface ServedByFallback {
  tool: string;
  /** The tool that answers in its place (the spec's `fallback`). */
  fallback: string;
  /** Why the tool cannot answer itself: the capabilities it lacks. */
  reasons: ExclusionReason[];
}

/** An offered tool that acts as its caller, who has not connected its provider (or it expired). */
export interface NeedsConnection {
  tool: string;
  provider: string;
  scopes: string[];
}

export interface SelectionInput<T extends ToolSpec = ToolSpec> {
  /** Only the role order, the modes and which tools act as their caller are read. */
  config: Pick<StageConfig, "roles" | "modes"> & Partial<Pick<StageConfig, "connections">>;
  /**
   * The providers the principal has a working connection with. Tools acting as their caller
   * at another provider are still offered (a call answers with a link to connect), and listed
   * in `needsConnection`. Absent: none.
   */
  connected?: ReadonlySet<string>;
  tools: readonly T[];
  /**
   * Where the fallbacks `tools` name are looked up when a filtered read left them out of
   * `tools` (default: `tools`). They are judged, never selected.
   */
  fallbacks?: readonly ToolSpec[];
  /** The principal's role; a role the stage does not know ranks below every role. */
  role: string;
  /** Absent or null: the stage's default mode. */
  mode?: string | null;
  /**
   * Stored statuses; a required capability with no status counts as missing. A status named
   * after a tool says whether it has anything to serve as a fallback (see `fallbackReasons`).
   */
  capabilities: readonly Pick<CapabilityStatus, "name" | "available">[];
  /** When given, only these tool ids may be selected. */
  allow?: readonly string[];
  deny?: readonly string[];
}

export interface Selection<T extends ToolSpec = ToolSpec> {
  mode: string;
  /** Ordered by category (the fixed order of CATEGORIES), then id; with those served by a fallback. */
  available: T[];
  /** Same order as `available`. */
  excluded: ExcludedTool[];
  /** The available tools whose fallback answers for them, in the same order. */
  servedByFallback: ServedByFallback[];
  /** The available tools that need the principal's connection first, in the same order. */
  needsConnection: NeedsConnection[];
}

/**
 * Which tools a principal may and can use in a mode, and why every other one is left out.
 * A tool that lacks only capabilities is still offered when its fallback can serve in its
 * place (see `fallbackReasons`), and listed in `servedByFallback`; the runtime answers its
 * calls with the fallback (runtime/policies.ts). Pure: the same input gives the same output,
 * whatever order the tools come in.
 */
export function select<T extends ToolSpec>(input: SelectionInput<T>): Selection<T> {
  const mode = resolveMode(input.config, input.mode);
  const judge = judgement(input, mode);
  const allow = input.allow ? new Set(input.allow) : undefined;
  const deny = new Set(input.deny ?? []);
  let byId: Map<string, ToolSpec> | undefined;
  const lookup = (id: string) => {
    byId ??= new Map((input.fallbacks ?? input.tools).map((tool) => [tool.id, tool]));
    return byId.get(id);
  };

  const available: T[] = [];
  const excluded: ExcludedTool[] = [];
  const servedByFallback: ServedByFallback[] = [];
  const needsConnection: NeedsConnection[] = [];
  for (const tool of sortedTools(input.tools)) {
    const reasons = judge.reasons(tool);
    if (deny.has(tool.id)) reasons.push("denied");
    if (allow && !allow.has(tool.id)) reasons.push("not_allowed");
    if (reasons.length === 0) {
      available.push(tool);
      continue;
    }
    const fallback =
      tool.fallback !== undefined && reasons.every(isCapabilityReason)
        ? lookup(tool.fallback)
        : undefined;
    if (!fallback || fallback.id === tool.id) {
      excluded.push({ tool: tool.id, reasons });
      continue;
    }
    const fallbackReasons = fallbackReasonsOf(fallback, judge);
    if (fallbackReasons.length === 0) {
      available.push(tool);
      servedByFallback.push({ tool: tool.id, fallback: fallback.id, reasons });
    } else {
      excluded.push({ tool: tool.id, reasons, fallbackReasons });
    }
  }
  for (const tool of available) {
    const acting = actsAsUser(tool, input.config);
    if (acting && !input.connected?.has(acting.provider)) {
      needsConnection.push({ tool: tool.id, provider: acting.provider, scopes: acting.scopes });
    }
  }
  return { mode, available, excluded, servedByFallback, needsConnection };
}

/**
 * Why `fallback` cannot serve in another tool's place for this role and mode (empty: it can),
 * by the same rule `select` offers a tool served by its fallback with. The calls service asks
 * it when it accepts a call and records the answer on the call, for the runtime to obey.
 */
export function fallbackReasons(
  input: Pick<SelectionInput, "config" | "role" | "mode" | "capabilities">,
  fallback: ToolSpec,
): ExclusionReason[] {
  return fallbackReasonsOf(fallback, judgement(input, resolveMode(input.config, input.mode)));
}

/**
 * Why a fallback cannot serve in another tool's place: whatever would leave it out of this
 * selection itself (allow and deny aside: they narrow what the caller sees, not what answers
 * for it), and `capability:<its id>` when a status named after it says it has nothing to serve
 * on this stage (static_links without links: still offered itself, to say so, but no stand-in
 * for web_search). A tool without such a status serves whenever it is available.
 */
function fallbackReasonsOf(
  fallback: ToolSpec,
  judge: Pick<Judgement, "reasons" | "lacks">,
): ExclusionReason[] {
  const reasons = judge.reasons(fallback);
  const serving: ExclusionReason = `capability:${fallback.id}`;
  if (judge.lacks(fallback.id) && !reasons.includes(serving)) reasons.push(serving);
  return reasons;
}

interface Judgement {
  /** What leaves a tool out for this role, mode and stage: every reason but allow / deny. */
  reasons(tool: ToolSpec): ExclusionReason[];
  /** A status under this name says it is missing (any one of them, if several). */
  lacks(capability: string): boolean;
}

function judgement(
  input: Pick<SelectionInput, "config" | "role" | "capabilities">,
  mode: string,
): Judgement {
  const { config } = input;
  // A capability counts only if every status stored under its name says it is there.
  const present = new Set<string>();
  const absent = new Set<string>();
  for (const status of input.capabilities) (status.available ? present : absent).add(status.name);
  return {
    reasons(tool) {
      const reasons: ExclusionReason[] = [];
      const { enabled, modes, minRole } = tool.availability;
      if (!enabled) reasons.push("disabled");
      if (modes !== undefined && !modes.includes(mode)) reasons.push("mode");
      // An unknown minRole is a configuration mistake, which roleAtLeast closes rather than opens.
      if (minRole !== undefined && !roleAtLeast(config, input.role, minRole)) reasons.push("role");
      // A tool acting as its caller needs the stage to know its provider, not the stage's secret.
      const acting = actsAsUser(tool, config);
      for (const name of new Set(tool.requires)) {
        if (name === acting?.capability) continue;
        if (!present.has(name) || absent.has(name)) reasons.push(`capability:${name}`);
      }
      if (acting && !config.connections?.providers[acting.provider]) {
        reasons.push(`capability:connections.${acting.provider}`);
      }
      return reasons;
    },
    lacks: (capability) => absent.has(capability),
  };
}

function isCapabilityReason(reason: ExclusionReason): boolean {
  return reason.startsWith("capability:");
}

/**
 * The tools in presentation order, sorted once per list: the catalog hands every request of
 * a few seconds the same array, and sorting a thousand tools is most of a selection's time.
 */
const sortedLists = new WeakMap<readonly ToolSpec[], { listed: ToolSpec[]; sorted: ToolSpec[] }>();
function sortedTools<T extends ToolSpec>(tools: readonly T[]): readonly T[] {
  const kept = sortedLists.get(tools);
  // The same tools in the same places (a comparison of references, far cheaper than a sort):
  // an array changed in place is sorted again.
  if (kept && sameTools(kept.listed, tools)) return kept.sorted as T[];
  const sorted = [...tools].sort(byCategoryThenId);
  sortedLists.set(tools, { listed: [...tools], sorted });
  return sorted;
}

function sameTools(a: readonly ToolSpec[], b: readonly ToolSpec[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The mode a request names, or the stage's default; an unknown mode is a 400. */
export function resolveMode(
  config: Pick<StageConfig, "modes">,
  mode: string | null | undefined,
): string {
  const resolved = mode ?? config.modes.default;
  if (!config.modes.available.includes(resolved)) {
    throw new ValidationError(`Unknown mode ${resolved}.`, {
      details: [{ path: "mode", message: `One of: ${config.modes.available.join(", ")}.` }],
    });
  }
  return resolved;
}

const CATEGORY_RANK = new Map<string, number>(CATEGORIES.map((name, rank) => [name, rank]));

/** The fixed presentation order: category as listed in CATEGORIES, then id by code unit. */
export function byCategoryThenId(
  a: Pick<ToolSpec, "category" | "id">,
  b: Pick<ToolSpec, "category" | "id">,
): number {
  const byCategory = (CATEGORY_RANK.get(a.category) ?? -1) - (CATEGORY_RANK.get(b.category) ?? -1);
  if (byCategory !== 0) return byCategory;
  // Not localeCompare: the order must not depend on the machine's locale.
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
