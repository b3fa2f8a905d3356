import type { Principal } from "@toolbus/wire/model/call";
import type { Category, ToolSpec } from "@toolbus/wire/model/tool";
import { DEFAULT_SEARCH_LIMIT } from "@toolbus/wire/schemas/search";
import type { CatalogList } from "../../ports";
import { catalogVersion } from "../../util/catalog-version";
import { type AccessRules, mayActForOthers } from "../access";
import type { ExcludedTool, ExclusionReason } from "../selection/select";
import type { SelectionRequest, SelectionService } from "../selection/service";
import type { ConceptGroups } from "./concepts";
import type { ExcludedMatch, ToolExplanation } from "./explain";
import type { SearchField } from "./fields";
import type { SemanticRanking } from "./semantic";
import type { ToolIndex } from "./tool-index";

export interface SearchRequest extends SelectionRequest {
  query: string;
  limit?: number | undefined;
  /** Why each tool was found; for administrators, the matching tools selection left out. */
  explain?: boolean | undefined;
}

export interface FoundTool {
  id: string;
  title: string;
  toolset: string;
  category: Category;
  description: string;
  usageHint: string;
  inputSchema: Record<string, unknown>;
  score: number;
  matched: SearchField[];
  /** With `explain` only. */
  explanation?: ToolExplanation;
}

export interface ToolSearch {
  query: string;
  mode: string;
  role: string;
  /** The catalog state searched: the same version, the same index. */
  catalogVersion: string;
  tools: FoundTool[];
  /** With `explain`, for administrators only: matching tools selection leaves out. */
  excluded?: ExcludedMatch[];
}

/**
 * Indexes kept per process, by the version of what they hold: a few roles and modes, each
 * through a catalog change.
 */
const KEPT_INDEXES = 8;

/** Exclusions the request itself asks for: the caller knows those tools are there. */
const NARROWING = new Set<ExclusionReason>(["denied", "not_allowed"]);
/** Kept indexes by the synonyms they were built with (a stage's own, or none), then version. */
const indexes = new WeakMap<object, Map<string, Promise<ToolIndex>>>();
const NO_SYNONYMS: ConceptGroups = [];

/**
 * Ranked search over the tools a principal may use: the same selection as the catalog,
 * prompt and MCP surfaces (mode, role, enabled, capabilities, allow / deny) decides what may
 * be found, so a search offers no tool the selection leaves out. Each index holds the tools
 * one caller may see and is kept by their version, in each process: a change to them, or to
 * what a role or mode sees, builds a new one.
 */
export class SearchService {
  constructor(
    private readonly deps: {
      selection: SelectionService;
      /** Ranks by meaning too (`search.embeddings`), fused with the words; absent, words alone. */
      semantic?: Pick<SemanticRanking, "rank"> | undefined;
      /** Who may administer (app/access.ts): only they are told what selection left out. */
      access?: AccessRules | undefined;
      /** The stage's own words for things (`search.synonyms`), beside the built-in ones. */
      synonyms?: ConceptGroups | undefined;
    },
  ) {}

  async search(principal: Principal, request: SearchRequest): Promise<ToolSearch> {
    const { role, catalog, selection } = await this.deps.selection.select(principal, request);
    // The index holds only what this caller may see (allow / deny aside: the caller chose
    // those), so neither a score nor the version says anything about the tools it may not.
    const { version, tools: visible, byId } = visibleTools(catalog, selection.excluded);
    const index = await indexOf(version, visible, catalog.toolsets, this.deps.synonyms);
    // What the index holds is available unless the request itself left it out (allow / deny):
    // a few ids to check, not the whole selection to copy for each request.
    const narrowed = new Set<string>();
    for (const entry of selection.excluded) {
      if (entry.reasons.every((reason) => NARROWING.has(reason))) narrowed.add(entry.tool);
    }
    const limit = request.limit ?? DEFAULT_SEARCH_LIMIT;
    const allowed = (id: string) => byId.has(id) && !narrowed.has(id);
    const lexical = (limit: number) => index.search(request.query, { limit, allowed });
    const hits = this.deps.semantic
      ? await this.deps.semantic.rank({
          query: request.query,
          version,
          tools: visible,
          limit,
          allowed,
          lexical,
        })
      : lexical(limit);
    const tools: FoundTool[] = [];
    for (const hit of hits) {
      const tool = allowed(hit.id) ? byId.get(hit.id) : undefined;
      if (!tool) continue;
      tools.push({
        id: tool.id,
        title: tool.title,
        toolset: tool.toolset,
        category: tool.category,
        description: tool.description,
        usageHint: tool.usageHint,
        inputSchema: tool.inputSchema,
        score: hit.score,
        matched: hit.matched,
      });
    }
    const found = { query: request.query, mode: selection.mode, role, catalogVersion: version };
    if (!request.explain) return { ...found, tools };
    // Loaded with the first search that asks why; administrators also hear what was left out.
    const { explainSearch } = await import("./explain");
    const { access } = this.deps;
    const administers = access !== undefined && mayActForOthers(access, principal);
    const explained = await explainSearch({
      query: request.query,
      limit,
      index,
      tools,
      catalog,
      selection,
      administers,
    });
    return { ...found, ...explained };
  }
}

interface VisibleSet {
  version: string;
  tools: ToolSpec[];
  /** The same tools by id. */
  byId: ReadonlyMap<string, ToolSpec>;
}

const visibleSets = new WeakMap<CatalogList, Map<string, VisibleSet>>();

/**
 * The listed tools a caller may see, and their version. Worked out once per listed catalog
 * (the same list serves every request for a few seconds) and set of hidden tools, since
 * hashing a thousand tools' stamps costs more than the search itself.
 */
function visibleTools(catalog: CatalogList, excluded: readonly ExcludedTool[]) {
  const hidden = excluded
    .filter((entry) => !entry.reasons.every((reason) => NARROWING.has(reason)))
    .map((entry) => entry.tool);
  const key = hidden.join(",");
  let byHidden = visibleSets.get(catalog);
  if (!byHidden) {
    byHidden = new Map();
    visibleSets.set(catalog, byHidden);
  }
  let kept = byHidden.get(key);
  if (!kept) {
    const out = new Set(hidden);
    const tools = catalog.tools.filter((tool) => !out.has(tool.id));
    // Their toolsets too: a toolset's description is part of its tools' documents.
    const sets = new Set(tools.map((tool) => tool.toolset));
    const toolsets = catalog.toolsets.filter((toolset) => sets.has(toolset.name));
    kept = {
      version: catalogVersion(toolsets, tools),
      tools,
      byId: new Map(tools.map((tool) => [tool.id, tool])),
    };
    byHidden.set(key, kept);
  }
  return kept;
}

/**
 * The index of these tools, by their version (built on first use; the ranking code loads
 * with it). One per role and mode a stage's callers search in, and per catalog change.
 */
function indexOf(
  version: string,
  tools: readonly ToolSpec[],
  toolsets: CatalogList["toolsets"],
  synonyms: ConceptGroups = NO_SYNONYMS,
): Promise<ToolIndex> {
  let kept = indexes.get(synonyms);
  if (!kept) {
    kept = new Map();
    indexes.set(synonyms, kept);
  }
  const found = kept.get(version);
  if (found) {
    // Most recently used last, so the oldest version goes first.
    kept.delete(version);
    kept.set(version, found);
    return found;
  }
  const building = Promise.all([import("./tool-index"), import("./concepts")]).then(
    ([{ ToolIndex }, { conceptsWith }]) =>
      ToolIndex.build(tools, toolsets, { concepts: conceptsWith(synonyms) }),
  );
  // A failed build is not kept: the next search tries again.
  const versions = kept;
  building.catch(() => versions.delete(version));
  kept.set(version, building);
  for (const old of kept.keys()) {
    if (kept.size <= KEPT_INDEXES) break;
    kept.delete(old);
  }
  return building;
}
