import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stemmer } from "stemmer";
import { ConceptIndex, GENERAL_GROUPS } from "../packages/core/src/app/search/concepts";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";
import type { RemoteTool } from "../packages/core/src/registered/mcp-client";
import { mcpToolsetPlan, snakeCase } from "../packages/core/src/registered/plan";
import { toolSpecOf } from "../packages/core/src/tool-definition";
import { builtinTools, builtinToolsets } from "../packages/tools/src/builtin";
import { mcpToolsetRegistration } from "../packages/wire/src/model/registered";
import type { ToolSpec, ToolsetSpec } from "../packages/wire/src/model/tool";
import {
  benchParts,
  type LabelledQuery,
  type QueryPart,
  type SearchQuality,
  scoreSearch,
} from "./search-fixture";
import { type Measurement, measurement } from "./stats";

const REAL = join(import.meta.dirname, "..", "test", "fixtures", "search-real");

/** What one fixture file holds: a published server's `tools/list`, verbatim. */
interface ServerFile {
  package: string;
  version: string;
  tools: RemoteTool[];
}

export interface RealCatalog {
  toolsets: ToolsetSpec[];
  /** The registered servers' tools, as registration plans them, and the built-ins. */
  tools: ToolSpec[];
  /** `<package>#<remote tool name>` and `builtin#<tool id>` -> tool id. */
  ids: Map<string, string>;
  /** Tool id -> its label key (the inverse of `ids`). */
  labels: Map<string, string>;
  /** Servers whose tools registration refuses as listed, and what was done about it. */
  adjusted: Array<{ package: string; refusal: string; tools: number }>;
}

/**
 * The toolset name a registrant would give a package: its name without the scope and the
 * words "mcp" and "server", snake_cased (`@modelcontextprotocol/server-slack` -> `slack`,
 * `@wonderwhy-er/desktop-commander` -> `desktop_commander`); the scope when nothing is left
 * (`@playwright/mcp` -> `playwright`). A name already taken (by a built-in toolset, or by a
 * package earlier in name order) gets `_mcp`, then `_mcp2`, ... appended.
 */
function toolsetNameOf(pkg: string, taken: Set<string>): string {
  const [scope, bare] = pkg.startsWith("@") ? pkg.slice(1).split("/") : [undefined, pkg];
  const words = (bare ?? "").split(/[^a-z0-9]+/i).filter((w) => !/^(mcp|server)$/i.test(w));
  const base = snakeCase(words.join("_")) || snakeCase(scope ?? "") || "server";
  let name = base;
  for (let n = 1; taken.has(name); n++) name = `${base}_mcp${n === 1 ? "" : n}`;
  taken.add(name);
  return name;
}

/** `name` as an id of at most 48 characters, numbered when cutting it made it one already used. */
function shortId(name: string, used: ReadonlySet<string>): string {
  const long = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  let id = long.slice(0, 48).replace(/_+$/, "");
  for (let n = 2; used.has(id); n++) id = `${long.slice(0, 45).replace(/_+$/, "")}_${n}`;
  return id;
}

/**
 * An input schema registration would refuse (no `"type": "object"` at the root: the gitlab
 * server publishes `{ $schema }` alone) with `"type": "object"` added and the rest kept. What a
 * registrant would have to do to register that server at all; the tools' text is unchanged,
 * and search never reads schemas.
 */
function withObjectRoot(tool: RemoteTool): RemoteTool {
  const schema = (tool.inputSchema ?? {}) as Record<string, unknown>;
  if (schema.type === "object") return tool;
  return { ...tool, inputSchema: { ...schema, type: "object" } as RemoteTool["inputSchema"] };
}

/**
 * The real catalog as Toolbus serves it: every server in test/fixtures/search-real/servers
 * registered as a remote MCP toolset through core's `mcpToolsetPlan` (so ids, titles, usage
 * hints and descriptions are what registration makes of them), next to the built-ins. Ids two
 * toolsets would share (a server's and a built-in's, or two servers') are renamed on every
 * server that has them, to `<toolset>_<id>`, as a registrant resolving the 400 would.
 */
export function loadRealCatalog(sets: readonly string[] = ["servers"]): RealCatalog {
  const servers = sets.flatMap((set) =>
    readdirSync(join(REAL, set))
      .filter((file) => file.endsWith(".json"))
      .sort()
      .map((file) => JSON.parse(readFileSync(join(REAL, set, file), "utf8")) as ServerFile),
  );
  servers.sort((a, b) => (a.package < b.package ? -1 : 1));
  const builtins = builtinTools.map(toolSpecOf);
  const taken = new Set(builtinToolsets.map((set) => set.name));
  const names = servers.map((server) => toolsetNameOf(server.package, taken));

  // Ids more than one toolset would register under.
  const owners = new Map<string, number>();
  for (const tool of builtins) owners.set(tool.id, 1);
  for (const server of servers) {
    for (const id of new Set(server.tools.map((tool) => snakeCase(tool.name)))) {
      owners.set(id, (owners.get(id) ?? 0) + 1);
    }
  }

  const toolsets: ToolsetSpec[] = [...builtinToolsets];
  const tools: ToolSpec[] = [...builtins];
  const ids = new Map<string, string>(builtins.map((tool) => [`builtin#${tool.id}`, tool.id]));
  const adjusted: RealCatalog["adjusted"] = [];
  servers.forEach((server, i) => {
    const name = names[i] as string;
    const renames: Record<string, string> = {};
    const used = new Set<string>();
    for (const tool of server.tools) {
      const id = snakeCase(tool.name);
      // A name too long for an id is cut to 48 characters, as a registrant would rename it.
      const usable = id || shortId(tool.name, used);
      if ((owners.get(usable) ?? 0) > 1) renames[tool.name] = shortId(`${name}_${usable}`, used);
      else if (!id) renames[tool.name] = usable;
      used.add(renames[tool.name] ?? usable);
    }
    const registration = mcpToolsetRegistration.parse({
      kind: "mcp",
      name,
      description: `${server.package}@${server.version}`,
      owner: "search bench",
      url: `https://${name.replaceAll("_", "-")}.example/mcp`,
      renames,
    });
    let plan: ReturnType<typeof mcpToolsetPlan>;
    try {
      plan = mcpToolsetPlan(registration, server.tools);
    } catch (error) {
      const refused = server.tools.filter((tool) => tool.inputSchema?.type !== "object");
      if (refused.length === 0) throw error;
      adjusted.push({
        package: server.package,
        refusal: (error as Error).message,
        tools: refused.length,
      });
      plan = mcpToolsetPlan(registration, server.tools.map(withObjectRoot));
    }
    toolsets.push(plan.toolset);
    for (const tool of plan.tools) {
      tools.push(tool);
      const remote = tool.implementation.kind === "mcp" ? tool.implementation.remoteName : tool.id;
      ids.set(`${server.package}#${remote}`, tool.id);
    }
  });
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.id)) throw new Error(`search-real: tool id ${tool.id} twice`);
    seen.add(tool.id);
  }
  const labels = new Map([...ids].map(([label, id]) => [id, label]));
  return { toolsets, tools, ids, labels, adjusted };
}

export interface RealQueries {
  heldOutServers: string[];
  rule?: string;
  queries: LabelledQuery[];
}

/** The labelled queries, with labels resolved to tool ids; undefined until they are written. */
export function loadRealQueries(catalog: RealCatalog): RealQueries | undefined {
  const file = join(REAL, "queries.json");
  if (!existsSync(file)) return undefined;
  const raw = JSON.parse(readFileSync(file, "utf8")) as RealQueries;
  const unresolved = { tune: [] as string[], heldout: 0 };
  const queries = raw.queries.map((query) => ({
    ...query,
    relevant: query.relevant.map((label) => {
      const id = catalog.ids.get(label);
      if (id === undefined) {
        // Held-out labels are not printed: nothing of the held-out part is read while tuning.
        if (query.part === "tune") unresolved.tune.push(label);
        else unresolved.heldout++;
      }
      return id ?? `unresolved:${label}`;
    }),
  }));
  if (unresolved.tune.length > 0 || unresolved.heldout > 0) {
    console.error(
      `search-real: unresolved labels: tune ${JSON.stringify(unresolved.tune)}, held-out ${unresolved.heldout}`,
    );
  }
  return { ...raw, queries };
}

/**
 * The baseline's words, fixed here so that it does not move with the ranker's tokenizer:
 * letters and digits, lowercased, a short list of English stop words dropped, Porter stems.
 */
const PLAIN_STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get how i in into is it its me my " +
    "need of on or our please should so some than that the their them then there these this to " +
    "tool use using want was we what when where which while who will with would you your"
  ).split(" "),
);

export function plainTerms(text: string): Set<string> {
  const words =
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((word) => !PLAIN_STOP_WORDS.has(word)).map((word) => stemmer(word)));
}

/**
 * Plain word overlap over name and description: tools by how many of the query's words
 * (stemmed) their id and description hold, ties by id. What a catalog without an index does.
 */
export function nameDescriptionOverlap(tools: readonly ToolSpec[]) {
  const texts = tools.map((tool) => ({
    id: tool.id,
    terms: plainTerms(`${tool.id} ${tool.description}`),
  }));
  return (query: string) => {
    const wanted = [...plainTerms(query)];
    return texts
      .map((text) => ({ id: text.id, hits: wanted.filter((w) => text.terms.has(w)).length }))
      .filter((scored) => scored.hits > 0)
      .sort((a, b) => b.hits - a.hits || (a.id < b.id ? -1 : 1))
      .slice(0, 10)
      .map((scored) => scored.id);
  };
}

/** Queries none of whose words is in the name or description of any of their relevant tools. */
export function sharingNoWord(queries: readonly LabelledQuery[], tools: readonly ToolSpec[]) {
  const byId = new Map(
    tools.map((tool) => [tool.id, plainTerms(`${tool.id} ${tool.description}`)]),
  );
  return queries.filter((query) => {
    const wanted = plainTerms(query.q);
    return !query.relevant.some((id) => [...wanted].some((w) => byId.get(id)?.has(w)));
  }).length;
}

export interface RealQuality {
  part: QueryPart;
  ours: SearchQuality;
  plain: SearchQuality;
  sharingNoWord: number;
  /** The tune part ranked with only the concept groups not written for its queries. */
  generalOnly?: SearchQuality;
}

/**
 * Quality of Toolbus's ranking on the real catalog, per part. The index holds every tool, as
 * `SearchService` builds it for an administrator (registered tools are offered to admins
 * first, and no built-in is left out by selection): the same ToolIndex, the same scoping.
 */
export function realSearchQuality(): { catalog: RealCatalog; parts: RealQuality[] } | undefined {
  const catalog = loadRealCatalog();
  const labelled = loadRealQueries(catalog);
  if (!labelled) return undefined;
  const rankedBy = (index: ToolIndex) => (query: string) =>
    index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);
  const ranked = rankedBy(ToolIndex.build(catalog.tools, catalog.toolsets));
  // The same ranking with only the groups written without reading these queries.
  const general = rankedBy(
    ToolIndex.build(catalog.tools, catalog.toolsets, {
      concepts: ConceptIndex.of(GENERAL_GROUPS),
    }),
  );
  const overlap = nameDescriptionOverlap(catalog.tools);
  const parts = benchParts().map((part: QueryPart) => {
    const queries = labelled.queries.filter((query) => query.part === part);
    return {
      part,
      ours: scoreSearch(queries, ranked),
      plain: scoreSearch(queries, overlap),
      sharingNoWord: sharingNoWord(queries, catalog.tools),
      ...(part === "tune" ? { generalOnly: scoreSearch(queries, general) } : {}),
    };
  });
  return { catalog, parts };
}

/**
 * The held-out sets added after the first, in the order they were written: each one's servers
 * (test/fixtures/search-real/<dir>) and labelled queries (<dir>-queries.json), ranked among
 * every set up to it and the built-ins. None of them is ever tuned on.
 */
const LATER_HELD_OUT_SETS = {
  second: { dir: "heldout2", catalog: ["servers", "heldout2"] },
  third: { dir: "heldout3", catalog: ["servers", "heldout2", "heldout3"] },
  fourth: { dir: "heldout4", catalog: ["servers", "heldout2", "heldout3", "heldout4"] },
} as const;

export type LaterHeldOutSet = keyof typeof LATER_HELD_OUT_SETS;

export const laterHeldOutSets = Object.keys(LATER_HELD_OUT_SETS) as LaterHeldOutSet[];

export interface LaterHeldOutLabels {
  catalog: RealCatalog;
  /** The packages of this set's own servers (not those of the sets before it). */
  packages: Set<string>;
  /** Each query with its labels as written (`labels`) and resolved to tool ids (`relevant`). */
  queries: Array<LabelledQuery & { labels: string[] }>;
  /** How many labels name no tool of the catalog. */
  unresolved: number;
}

/**
 * One later held-out set's catalog and labelled queries, labels resolved to tool ids; undefined
 * before its queries exist. Reads labels only: it ranks nothing.
 */
export function loadLaterHeldOutSet(set: LaterHeldOutSet): LaterHeldOutLabels | undefined {
  const { dir, catalog: sets } = LATER_HELD_OUT_SETS[set];
  const file = join(REAL, `${dir}-queries.json`);
  if (!existsSync(file)) return undefined;
  const catalog = loadRealCatalog(sets);
  const packages = new Set(
    readdirSync(join(REAL, dir))
      .filter((name) => name.endsWith(".json"))
      .map(
        (name) => (JSON.parse(readFileSync(join(REAL, dir, name), "utf8")) as ServerFile).package,
      ),
  );
  const raw = JSON.parse(readFileSync(file, "utf8")) as { queries: Omit<LabelledQuery, "part">[] };
  let unresolved = 0;
  const queries = raw.queries.map((query) => ({
    ...query,
    part: "heldout" as const,
    labels: query.relevant,
    relevant: query.relevant.map((label) => {
      const id = catalog.ids.get(label);
      if (id === undefined) unresolved++;
      return id ?? `unresolved:${label}`;
    }),
  }));
  return { catalog, packages, queries, unresolved };
}

/**
 * Quality on one later held-out set (`second`: heldout2, `third`: heldout3): its queries ranked
 * among its own servers, the sets before it and the built-ins. Scored once per run, never tuned
 * on; undefined while tuning (BENCH_SEARCH_TUNE_ONLY) or before the queries exist.
 */
export function laterHeldOutQuality(
  set: LaterHeldOutSet,
): { catalog: RealCatalog; servers: number; quality: Omit<RealQuality, "part"> } | undefined {
  if (process.env.BENCH_SEARCH_TUNE_ONLY === "1") return undefined;
  const labelled = loadLaterHeldOutSet(set);
  if (!labelled) return undefined;
  const { catalog, packages, queries, unresolved } = labelled;
  if (unresolved > 0) console.error(`search-real: ${unresolved} unresolved ${set}-set labels`);
  const index = ToolIndex.build(catalog.tools, catalog.toolsets);
  const ranked = (query: string) =>
    index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);
  return {
    catalog,
    servers: packages.size,
    quality: {
      ours: scoreSearch(queries, ranked),
      plain: scoreSearch(queries, nameDescriptionOverlap(catalog.tools)),
      sharingNoWord: sharingNoWord(queries, catalog.tools),
    },
  };
}

/** recall@1, recall@5 and MRR of `ours` beside plain word overlap's, named by `name`. */
function qualityRows(
  name: (metric: string) => string,
  ours: SearchQuality,
  plain: SearchQuality,
): Measurement[] {
  const baseline = (value: number) => ({ name: "plain word overlap, name and description", value });
  return [
    measurement(name("recall@1"), "", ours.recallAt1, baseline(plain.recallAt1), "higher"),
    measurement(name("recall@5"), "", ours.recallAt5, baseline(plain.recallAt5), "higher"),
    measurement(name("MRR"), "", ours.mrr, baseline(plain.mrr), "higher"),
  ];
}

/**
 * `npm run bench -- search-real`: recall@1, recall@5 and MRR on the real catalog's tune and
 * held-out queries beside plain word overlap over name and description, and how many
 * held-out queries share no word with their tools. Only aggregates: no held-out query is
 * printed.
 */
export function benchSearchReal(): Measurement[] {
  const quality = realSearchQuality();
  if (!quality) {
    console.error("search-real: test/fixtures/search-real/queries.json is not there yet");
    return [];
  }
  const { catalog, parts } = quality;
  for (const adjusted of catalog.adjusted) {
    console.error(
      `search-real: ${adjusted.package}: ${adjusted.tools} tools registered with "type": "object" added to their input schema (${adjusted.refusal})`,
    );
  }
  const servers = catalog.toolsets.length - builtinToolsets.length;
  const results: Measurement[] = [];
  for (const { part, ours, plain, sharingNoWord: none, generalOnly } of parts) {
    const name = (metric: string) =>
      `search, real catalog: ${metric}, ${part} queries (${ours.queries}), ${catalog.tools.length} tools (${servers} MCP servers and the built-ins)`;
    results.push(...qualityRows(name, ours, plain));
    if (generalOnly) {
      // What holds beyond the concept groups written while reading the tune queries: an
      // estimate, from the tune part, of how the ranking meets words nobody wrote groups for.
      const general = (metric: string) =>
        `search, real catalog: ${metric}, tune queries (${generalOnly.queries}) without the concept groups written for them`;
      results.push(...qualityRows(general, generalOnly, plain));
    }
    if (part === "heldout") {
      results.push(
        measurement(
          `search, real catalog: held-out queries sharing no word with any of their tools' name and description`,
          "queries",
          none,
          { name: "held-out queries", value: ours.queries },
          "lower",
        ),
      );
    }
  }
  for (const set of laterHeldOutSets) {
    const later = laterHeldOutQuality(set);
    if (!later) continue;
    const { ours, plain, sharingNoWord: none } = later.quality;
    const all = later.catalog.toolsets.length - builtinToolsets.length;
    const name = (metric: string) =>
      `search, real catalog, ${set} held-out set: ${metric}, queries (${ours.queries}) on ${later.servers} servers never tuned on, ${later.catalog.tools.length} tools (${all} MCP servers and the built-ins)`;
    results.push(
      ...qualityRows(name, ours, plain),
      measurement(
        `search, real catalog, ${set} held-out set: queries sharing no word with any of their tools' name and description`,
        "queries",
        none,
        { name: `${set}-set queries`, value: ours.queries },
        "lower",
      ),
    );
  }
  return results;
}
