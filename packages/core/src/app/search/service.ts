import * as z from "zod";
import type { Principal } from "../../model/call";
import { prose } from "../../model/text";
import type { Category } from "../../model/tool";
import type { CatalogList } from "../../ports";
import type { SelectionRequest, SelectionService } from "../selection/service";
import type { SearchField } from "./fields";
import type { ToolIndex } from "./tool-index";

/** Longer than any need an agent puts in words; a bound on the work one search can ask for. */
export const MAX_QUERY_CHARS = 500;
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 50;

/** What to search for: visible text (a 400 names a control or half character). */
export const searchQuery = prose(MAX_QUERY_CHARS).refine(
  (query) => query.trim().length > 0,
  "not only spaces",
);
export const searchLimit = z.number().int().min(1).max(MAX_SEARCH_LIMIT);

export interface SearchRequest extends SelectionRequest {
  query: string;
  limit?: number | undefined;
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
}

export interface ToolSearch {
  query: string;
  mode: string;
  role: string;
  /** The catalog state searched: the same version, the same index. */
  catalogVersion: string;
  tools: FoundTool[];
}

/** Indexes kept per process, by catalog version: enough for a change and the one before. */
const KEPT_INDEXES = 4;
const indexes = new Map<string, Promise<ToolIndex>>();

/**
 * Ranked search over the tools a principal may and can call: the same selection as the
 * catalog, prompt and MCP surfaces (mode, role, enabled, capabilities, allow / deny) decides
 * what may be found, so a search never offers a tool a call would refuse. The index covers
 * the whole catalog and is rebuilt when its version changes, in each process.
 */
export class SearchService {
  constructor(private readonly deps: { selection: SelectionService }) {}

  async search(principal: Principal, request: SearchRequest): Promise<ToolSearch> {
    const { role, catalog, selection } = await this.deps.selection.select(principal, request);
    const index = await indexOf(catalog);
    const available = new Map(selection.available.map((tool) => [tool.id, tool]));
    const hits = index.search(request.query, {
      limit: request.limit ?? DEFAULT_SEARCH_LIMIT,
      allowed: (id) => available.has(id),
    });
    const tools: FoundTool[] = [];
    for (const hit of hits) {
      const tool = available.get(hit.id);
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
    return {
      query: request.query,
      mode: selection.mode,
      role,
      catalogVersion: catalog.version,
      tools,
    };
  }
}

/** The index of this catalog version, built on first use (the ranking code loads with it). */
function indexOf(catalog: CatalogList): Promise<ToolIndex> {
  const kept = indexes.get(catalog.version);
  if (kept) {
    // Most recently used last, so the oldest version goes first.
    indexes.delete(catalog.version);
    indexes.set(catalog.version, kept);
    return kept;
  }
  const building = import("./tool-index").then(({ ToolIndex }) =>
    ToolIndex.build(catalog.tools, catalog.toolsets),
  );
  // A failed build is not kept: the next search tries again.
  building.catch(() => indexes.delete(catalog.version));
  indexes.set(catalog.version, building);
  for (const version of indexes.keys()) {
    if (indexes.size <= KEPT_INDEXES) break;
    indexes.delete(version);
  }
  return building;
}
