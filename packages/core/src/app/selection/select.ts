import type { StageConfig } from "../../config";
import { ValidationError } from "../../errors";
import type { CapabilityStatus } from "../../model/capability";
import { CATEGORIES, type ToolSpec } from "../../model/tool";

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
}

export interface SelectionInput<T extends ToolSpec = ToolSpec> {
  /** Only the role order and the modes are read. */
  config: Pick<StageConfig, "roles" | "modes">;
  tools: readonly T[];
  /** The principal's role; a role the stage does not know ranks below every role. */
  role: string;
  /** Absent or null: the stage's default mode. */
  mode?: string | null;
  /** Stored statuses; a required capability with no status counts as missing. */
  capabilities: readonly Pick<CapabilityStatus, "name" | "available">[];
  /** When given, only these tool ids may be selected. */
  allow?: readonly string[];
  deny?: readonly string[];
}

export interface Selection<T extends ToolSpec = ToolSpec> {
  mode: string;
  /** Ordered by category (the fixed order of CATEGORIES), then id. */
  available: T[];
  /** Same order as `available`. */
  excluded: ExcludedTool[];
}

/**
 * Which tools a principal may and can use in a mode, and why every other one is left out.
 * Pure: the same input gives the same output, whatever order the tools come in.
 */
export function select<T extends ToolSpec>(input: SelectionInput<T>): Selection<T> {
  const { config } = input;
  const mode = resolveMode(config, input.mode);
  const rank = (role: string) => config.roles.indexOf(role);
  const roleRank = rank(input.role);
  // A capability counts only if every status stored under its name says it is there.
  const present = new Set<string>();
  const absent = new Set<string>();
  for (const status of input.capabilities) (status.available ? present : absent).add(status.name);
  const allow = input.allow ? new Set(input.allow) : undefined;
  const deny = new Set(input.deny ?? []);

  const available: T[] = [];
  const excluded: ExcludedTool[] = [];
  for (const tool of sortedTools(input.tools)) {
    const reasons: ExclusionReason[] = [];
    const { enabled, modes, minRole } = tool.availability;
    if (!enabled) reasons.push("disabled");
    if (modes !== undefined && !modes.includes(mode)) reasons.push("mode");
    // An unknown minRole is a configuration mistake: fail closed rather than open.
    if (minRole !== undefined && (roleRank < 0 || rank(minRole) < 0 || roleRank < rank(minRole))) {
      reasons.push("role");
    }
    for (const name of new Set(tool.requires)) {
      if (!present.has(name) || absent.has(name)) reasons.push(`capability:${name}`);
    }
    if (deny.has(tool.id)) reasons.push("denied");
    if (allow && !allow.has(tool.id)) reasons.push("not_allowed");
    if (reasons.length === 0) available.push(tool);
    else excluded.push({ tool: tool.id, reasons });
  }
  return { mode, available, excluded };
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
