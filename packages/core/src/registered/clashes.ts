import type { ToolsetRegistration } from "@toolbus/wire/model/registered";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { ConflictError, type Issue, ValidationError } from "../errors";
import type { RemoteTool } from "./mcp-client";

/**
 * Every name a registration would take that is not free, at once: the toolset's name (a
 * built-in's or another owner's), tool ids the registration gives twice (two remote names
 * that snake-case alike) and ids other toolsets hold. Each clash names where the registration
 * gives the name (`name`, `tools.<n>.id`, `renames.<remote name>`) and a free name to give
 * instead, so a registration with eight clashes is fixed in one round trip, not eight.
 */

/** One clash: where the name is given, what is wrong, and a free name to give there instead. */
export interface Clash extends Issue {
  suggestion: string;
}

/** A tool id a registration gives, and where. */
export interface IdClaim {
  id: string;
  /** `tools.<n>.id` (http), `renames.<remote name>` (mcp). */
  path: string;
  /** The server's name for the tool (mcp). */
  remoteName?: string;
}

const ID = /^[a-z][a-z0-9_]{0,47}$/;
const MAX_ID = 48;

/** The ids a registration gives its tools: an http tool's own, an MCP tool's rename or snake-cased name. */
export function idClaims(
  registration: ToolsetRegistration,
  remote: readonly Pick<RemoteTool, "name">[],
  snakeCase: (name: string) => string,
): IdClaim[] {
  if (registration.kind === "http") {
    return registration.tools.map((tool, index) => ({ id: tool.id, path: `tools.${index}.id` }));
  }
  return remote.map((tool) => ({
    id: registration.renames[tool.name] ?? snakeCase(tool.name),
    path: `renames.${tool.name}`,
    remoteName: tool.name,
  }));
}

/** Where a planned tool's id is given: by its remote name (mcp) or its place (http). */
export function claimsOf(toolset: ToolsetSpec, tools: readonly ToolSpec[]): IdClaim[] {
  return tools.map((tool, index) =>
    tool.implementation.kind === "mcp"
      ? {
          id: tool.id,
          path: `renames.${tool.implementation.remoteName}`,
          remoteName: tool.implementation.remoteName,
        }
      : { id: tool.id, path: toolset.kind === "mcp" ? "renames" : `tools.${index}.id` },
  );
}

/**
 * The clashes of the ids `claims` gives toolset `toolset`: unusable ids, ids given twice and
 * ids another toolset holds. `nameTaken`: the toolset's name is someone else's, so the tools
 * listed under it are not the registration's own either.
 */
export function idClashes(input: {
  toolset: Pick<ToolsetSpec, "name" | "owner" | "kind">;
  claims: readonly IdClaim[];
  catalog: { toolsets: readonly ToolsetSpec[]; tools: readonly ToolSpec[] };
  nameTaken?: boolean;
  /** Names suggested already (the toolset's), never suggested again. */
  suggested?: Set<string>;
  /**
   * Whether a claim is checked against the catalog (default: every one). A refresh holding
   * changes for review serves no added tool, so an added tool's id takes nothing yet.
   */
  served?: (claim: IdClaim) => boolean;
}): Clash[] {
  const { toolset, claims, catalog } = input;
  const owners = new Map(catalog.toolsets.map((t) => [t.name, t.owner]));
  const taken = new Map(catalog.tools.map((t) => [t.id, t.toolset]));
  const used = new Set<string>([...taken.keys(), ...claims.map((claim) => claim.id)]);
  const suggested = input.suggested ?? new Set<string>();
  const suggest = (id: string, fallback: string) =>
    freeName([`${toolset.name}_${id}`, id, fallback], used, suggested);
  const clashes: Clash[] = [];
  const first = new Map<string, IdClaim>();
  claims.forEach((claim, index) => {
    const remedy = (to: string, another = "another id") =>
      claim.remoteName !== undefined
        ? `give it ${another} in renames, e.g. "renames": { ${JSON.stringify(claim.remoteName)}: "${to}" }`
        : `register it under ${another}, e.g. "${to}"`;
    if (!ID.test(claim.id)) {
      const to = suggest(`tool_${index + 1}`, "tool");
      clashes.push({
        path: claim.path,
        message: `The server's tool ${JSON.stringify(claim.remoteName ?? claim.id)} has no usable id here; ${remedy(to, "one")}.`,
        suggestion: to,
      });
      return;
    }
    const earlier = first.get(claim.id);
    if (earlier) {
      const to = suggest(claim.id, claim.id);
      const message =
        claim.remoteName !== undefined
          ? `The server's tools ${JSON.stringify(earlier.remoteName)} and ${JSON.stringify(claim.remoteName)} would both be ${claim.id}; ${remedy(to)}.`
          : `Tool id ${claim.id} is listed twice (${earlier.path} and ${claim.path}); ${remedy(to)}.`;
      clashes.push({ path: claim.path, message, suggestion: to });
      return;
    }
    first.set(claim.id, claim);
    if (input.served && !input.served(claim)) return;
    const holder = taken.get(claim.id);
    if (holder === undefined || (holder === toolset.name && !input.nameTaken)) return;
    const to = suggest(claim.id, claim.id);
    clashes.push({
      path: claim.path,
      message: `Tool id ${claim.id} is already registered by toolset ${holder} (owner ${owners.get(holder) ?? "unknown"}); toolset ${toolset.name} (owner ${toolset.owner}) cannot register it too: ${remedy(to)}.`,
      suggestion: to,
    });
  });
  return clashes;
}

/** A toolset name that no toolset has, for a registration whose name is taken. */
export function freeToolsetName(
  name: string,
  kind: ToolsetSpec["kind"],
  catalog: { toolsets: readonly Pick<ToolsetSpec, "name">[] },
  suggested: Set<string>,
): string {
  return freeName(
    [`${name}_${kind}`, name],
    new Set(catalog.toolsets.map((toolset) => toolset.name)),
    suggested,
  );
}

/**
 * The first candidate that is a valid id and neither used nor suggested already, else the
 * first with the smallest free number after it (`_2`, `_3`, …), cut to fit 48 characters.
 */
function freeName(
  candidates: readonly string[],
  used: ReadonlySet<string>,
  suggested: Set<string>,
) {
  const free = (name: string) => ID.test(name) && !used.has(name) && !suggested.has(name);
  const take = (name: string) => {
    suggested.add(name);
    return name;
  };
  for (const candidate of candidates) if (free(candidate)) return take(candidate);
  const base =
    candidates.find((candidate) => ID.test(candidate)) ??
    candidates.find((candidate) => /^[a-z]/.test(candidate)) ??
    "tool";
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const name = `${base.slice(0, MAX_ID - suffix.length)}${suffix}`;
    if (free(name)) return take(name);
  }
}

/**
 * One refusal listing every clash: a 409 when the toolset's name is taken (as before, when
 * that was all it said), else a 400 (the registration must change: a rename, not a retry).
 * The message is the first clash's, and says how many more there are.
 */
export function clashError(clashes: readonly Clash[], nameTaken: boolean): Error {
  const [first] = clashes;
  const more =
    clashes.length > 1
      ? ` (${clashes.length} names clash in all; details lists each with a free name to give instead)`
      : "";
  const message = `${first?.message ?? "Names clash."}${more}`;
  const details = clashes.map(({ path, message, suggestion }) => ({ path, message, suggestion }));
  return nameTaken
    ? new ConflictError(message, { details })
    : new ValidationError(message, { details });
}
