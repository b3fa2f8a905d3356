import type { Principal } from "@toolbus/wire/model/call";
import {
  isConnectionHeader,
  type McpProtocol,
  type StageSecretHeader,
} from "@toolbus/wire/model/implementation";
import type { RelayCapabilities } from "@toolbus/wire/model/relay";
import { UnavailableError, ValidationError } from "../../errors";
import { RemoteRefusal } from "../../registered/remote-refusal";
import { ToolFailure } from "../../tool-definition";
import type { SelectionService } from "../selection/service";

/** A registered MCP server, as the federation asks it: by its toolset. */
export interface FederatedServer {
  toolset: string;
  url: string;
  /**
   * The stage's secret header. A server taking each caller's own token (`auth.provider`) is
   * asked with none: its prompts, resources and completions go without the caller's token.
   */
  auth?: StageSecretHeader | undefined;
  /** The generations it speaks, as discovery recorded them (absent: 2025-11-25). */
  protocols?: readonly McpProtocol[] | undefined;
}

/**
 * One federated request's round with its caller. `protocol` is the generation the MCP caller
 * speaks: the server is asked in it when it speaks it, else in its newest (absent: as before,
 * 2025-11-25 when the server speaks it). Over 2026-07-28 an `input_required` answer comes back
 * as the server sent it (`{ resultType: "input_required", inputRequests, requestState? }`),
 * and the caller's `inputResponses` / `requestState` for it go to the server with the retry.
 */
export interface FederationRound {
  protocol?: McpProtocol | undefined;
  /** The client capabilities the caller declared (what the server may ask it for). */
  capabilities?: RelayCapabilities | undefined;
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
}

/** What a server offers besides tools (see `listRemoteOfferings` in registered/mcp-client). */
export interface ServerOfferings {
  capabilities: { prompts: boolean; resources: boolean; completions: boolean };
  prompts: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  resourceTemplates: Record<string, unknown>[];
  truncated: boolean;
}

/** A completion's reference, as `completion/complete` names it. */
export type CompletionRef =
  | { type: "ref/prompt"; name: string }
  | { type: "ref/resource"; uri: string };

export interface CompletionParams {
  ref: CompletionRef;
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> } | undefined;
}

/**
 * The port to the servers themselves (registered/mcp-client through compose/federation.ts):
 * the outbound client, SSRF guard, timeouts and the toolset's auth header, as its tools use.
 * It fails with a ToolFailure when a server cannot be reached, and with a RemoteRefusal when
 * it answers a JSON-RPC error.
 */
export interface RemoteMcpServers {
  offerings(server: FederatedServer): Promise<ServerOfferings>;
  readResource(
    server: FederatedServer,
    uri: string,
    round?: FederationRound,
  ): Promise<Record<string, unknown>>;
  getPrompt(
    server: FederatedServer,
    name: string,
    args: Record<string, string> | undefined,
    round?: FederationRound,
  ): Promise<Record<string, unknown>>;
  complete(server: FederatedServer, params: CompletionParams): Promise<Record<string, unknown>>;
}

/** One merged list, and which servers it is missing or cut. */
export interface FederatedList {
  items: Record<string, unknown>[];
  /** Toolsets whose server did not answer its lists (left out, not an error). */
  unreachable: string[];
  /** Toolsets whose list was longer than the federation keeps (cut at the bound). */
  truncated: string[];
}

/**
 * Prompts, resources and completions of the registered MCP servers a caller may use, as the
 * MCP endpoint asks for them. Its own interface so `/mcp` stays thin (and optional there).
 */
export interface McpFederation {
  prompts(principal: Principal, mode: string): Promise<FederatedList>;
  resources(principal: Principal, mode: string): Promise<FederatedList>;
  resourceTemplates(principal: Principal, mode: string): Promise<FederatedList>;
  /** The server's result, or undefined when no server the caller may use offers `uri`. */
  readResource(
    principal: Principal,
    mode: string,
    uri: string,
    round?: FederationRound,
  ): Promise<Record<string, unknown> | undefined>;
  /** The server's result, or undefined when no server the caller may use offers `name`. */
  getPrompt(
    principal: Principal,
    mode: string,
    name: string,
    args: Record<string, string> | undefined,
    round?: FederationRound,
  ): Promise<Record<string, unknown> | undefined>;
  /** The server's result, or undefined when no server the caller may use offers the ref. */
  complete(
    principal: Principal,
    mode: string,
    params: CompletionParams,
  ): Promise<Record<string, unknown> | undefined>;
}

export interface FederationDeps {
  selection: Pick<SelectionService, "select">;
  remote: RemoteMcpServers;
  /** How long a server's lists are kept in this process, ms (default 10 s). */
  listCacheMs?: number;
  now?: () => number;
}

/** Most entries of one kind kept from one server (more are cut and reported). */
export const MAX_FEDERATED_ENTRIES = 500;

const DEFAULT_LIST_CACHE_MS = 10_000;
/** Result fields the gateway sets itself on 2026-07-28 (never the server's). */
const GATEWAY_FIELDS = ["resultType", "ttlMs", "cacheScope"] as const;

interface Offered {
  server: FederatedServer;
  offerings: ServerOfferings;
  item: Record<string, unknown>;
}

interface Merged {
  prompts: Map<string, Offered>;
  resources: Map<string, Offered>;
  templates: Map<string, Offered>;
  unreachable: string[];
  truncated: string[];
}

/**
 * Federation of registered MCP servers' prompts, resources and completions.
 *
 * - **Which servers**: a toolset's server counts for a caller when selection offers the caller
 *   at least one of its tools in the request's mode (role, mode, enabled, availability: what
 *   `tools/list` shows). A server is asked only for what its `initialize` declares.
 * - **Names**: each server's own prompt names, resource URIs and template URIs. When two
 *   servers offer the same one, the toolset whose name sorts first wins; the others' are left
 *   out (of the lists, and of reads, gets and completions).
 * - **Freshness**: each server's lists are kept `listCacheMs` per toolset revision, shared by
 *   every caller (the server is asked with the toolset's own credentials, whoever asks); reads,
 *   gets and completions always go to the server.
 */
export class ServerFederation implements McpFederation {
  private readonly cache = new Map<string, { at: number; offerings: Promise<ServerOfferings> }>();

  constructor(private readonly deps: FederationDeps) {}

  async prompts(principal: Principal, mode: string): Promise<FederatedList> {
    return listOf(await this.merged(principal, mode), "prompts");
  }

  async resources(principal: Principal, mode: string): Promise<FederatedList> {
    return listOf(await this.merged(principal, mode), "resources");
  }

  async resourceTemplates(principal: Principal, mode: string): Promise<FederatedList> {
    return listOf(await this.merged(principal, mode), "templates");
  }

  async readResource(principal: Principal, mode: string, uri: string, round?: FederationRound) {
    const merged = await this.merged(principal, mode);
    const owner =
      merged.resources.get(uri) ??
      [...merged.templates.values()].find((entry) =>
        templateMatches(String(entry.item.uriTemplate), uri),
      );
    if (!owner) return undefined;
    try {
      return gatewayless(await this.deps.remote.readResource(owner.server, uri, round));
    } catch (error) {
      // The server that listed it says it has no such resource (any more): not found.
      if (error instanceof RemoteRefusal && (error.code === -32002 || error.code === -32602)) {
        return undefined;
      }
      throw asCallerError(error);
    }
  }

  async getPrompt(
    principal: Principal,
    mode: string,
    name: string,
    args: Record<string, string> | undefined,
    round?: FederationRound,
  ) {
    const owner = (await this.merged(principal, mode)).prompts.get(name);
    if (!owner) return undefined;
    try {
      return gatewayless(await this.deps.remote.getPrompt(owner.server, name, args, round));
    } catch (error) {
      throw asCallerError(error);
    }
  }

  async complete(principal: Principal, mode: string, params: CompletionParams) {
    const merged = await this.merged(principal, mode);
    const { ref } = params;
    const owner =
      ref.type === "ref/prompt"
        ? merged.prompts.get(ref.name)
        : (merged.templates.get(ref.uri) ?? merged.resources.get(ref.uri));
    if (!owner) return undefined;
    // A server that offers the prompt but no completions has none to give.
    if (!owner.offerings.capabilities.completions) {
      return { completion: { values: [], total: 0, hasMore: false } };
    }
    try {
      return gatewayless(await this.deps.remote.complete(owner.server, params));
    } catch (error) {
      throw asCallerError(error);
    }
  }

  /** The registered MCP servers the caller may use, ordered by toolset name (the clash rule). */
  private async servers(principal: Principal, mode: string): Promise<FederatedServer[]> {
    const { catalog, selection } = await this.deps.selection.select(principal, { mode });
    const offered = new Set(
      selection.available
        .filter((tool) => tool.implementation.kind === "mcp")
        .map((tool) => tool.toolset),
    );
    const servers: (FederatedServer & { revision: number })[] = [];
    for (const toolset of catalog.toolsets) {
      if (toolset.kind !== "mcp" || !offered.has(toolset.name)) continue;
      const fromTool = catalog.tools.find(
        (tool) => tool.toolset === toolset.name && tool.implementation.kind === "mcp",
      )?.implementation;
      const source =
        toolset.source ??
        (fromTool?.kind === "mcp" ? { url: fromTool.url, auth: fromTool.auth } : undefined);
      if (!source) continue;
      // Discovery records the generations on each tool: the toolset's source predates them.
      const protocols = fromTool?.kind === "mcp" ? fromTool.protocols : undefined;
      servers.push({
        toolset: toolset.name,
        url: source.url,
        // A caller's own token is not sent here (yet): only a stage secret's header.
        ...(source.auth && !isConnectionHeader(source.auth) ? { auth: source.auth } : {}),
        ...(protocols ? { protocols } : {}),
        revision: toolset.revision,
      });
    }
    return servers.sort((a, b) => (a.toolset < b.toolset ? -1 : a.toolset > b.toolset ? 1 : 0));
  }

  private async merged(principal: Principal, mode: string): Promise<Merged> {
    const servers = await this.servers(principal, mode);
    const answers = await Promise.all(
      servers.map((server) =>
        this.offerings(server).then(
          (offerings) => ({ server, offerings }),
          () => ({ server, offerings: undefined }),
        ),
      ),
    );
    const merged: Merged = {
      prompts: new Map(),
      resources: new Map(),
      templates: new Map(),
      unreachable: [],
      truncated: [],
    };
    // In toolset-name order: the first server to offer a name keeps it.
    for (const { server, offerings } of answers) {
      if (!offerings) {
        merged.unreachable.push(server.toolset);
        continue;
      }
      if (offerings.truncated) merged.truncated.push(server.toolset);
      const keep = (into: Map<string, Offered>, items: Record<string, unknown>[], key: string) => {
        for (const item of items) {
          const name = item[key];
          if (typeof name !== "string" || into.has(name)) continue;
          into.set(name, { server, offerings, item });
        }
      };
      keep(merged.prompts, offerings.prompts, "name");
      keep(merged.resources, offerings.resources, "uri");
      keep(merged.templates, offerings.resourceTemplates, "uriTemplate");
    }
    return merged;
  }

  /** A server's lists, kept a short while per toolset revision; a failure is kept as long. */
  private offerings(server: FederatedServer & { revision?: number }): Promise<ServerOfferings> {
    const now = (this.deps.now ?? Date.now)();
    const ttl = this.deps.listCacheMs ?? DEFAULT_LIST_CACHE_MS;
    const key = `${server.toolset}\n${server.revision ?? 0}\n${server.url}`;
    const cached = this.cache.get(key);
    if (cached && now - cached.at < ttl) return cached.offerings;
    for (const [other, entry] of this.cache) if (now - entry.at >= ttl) this.cache.delete(other);
    const offerings = this.deps.remote.offerings(server);
    // Handled here so a failure kept in the cache is never an unhandled rejection.
    offerings.catch(() => undefined);
    if (ttl > 0) this.cache.set(key, { at: now, offerings });
    return offerings;
  }
}

function listOf(merged: Merged, kind: "prompts" | "resources" | "templates"): FederatedList {
  return {
    items: [...merged[kind].values()].map((entry) => entry.item),
    unreachable: merged.unreachable,
    truncated: merged.truncated,
  };
}

/**
 * The server's result without the fields the gateway answers for itself; an `input_required`
 * answer stays as sent, for the caller's next round.
 */
function gatewayless(result: Record<string, unknown>): Record<string, unknown> {
  if (result.resultType === "input_required") return result;
  const copy = { ...result };
  for (const field of GATEWAY_FIELDS) delete copy[field];
  return copy;
}

/**
 * A server's refusal keeps its words, as invalid params (a missing prompt argument, say); a
 * server that cannot be reached is unavailable, retryable.
 */
function asCallerError(error: unknown): unknown {
  if (error instanceof RemoteRefusal) {
    return new ValidationError(`${error.upstream} refused the request: ${error.message}`);
  }
  if (error instanceof ToolFailure) return new UnavailableError(error.failure.message);
  return error;
}

/** Longer URIs are never matched against a template: reading one costs a server request. */
const MAX_TEMPLATE_URI = 2_048;
/** A template with more expressions than this never matches (no server needs as many). */
const MAX_TEMPLATE_EXPRESSIONS = 8;

/**
 * Whether `uri` is one of `template`'s URIs (RFC 6570, as MCP servers use it): a simple
 * `{var}` matches one path segment, `{+var}` / `{#var}` anything, and `{?…}` / `{&…}` an
 * optional query.
 *
 * Templates come from servers and URIs from callers, so the match must stay linear: adjacent
 * expressions become one; a simple one stops at the first character of the literal after it
 * (so consecutive segments never compete for the same characters); and a template may hold
 * one expression that matches anything, else it never matches.
 */
export function templateMatches(template: string, uri: string): boolean {
  if (uri.length > MAX_TEMPLATE_URI) return false;
  const parts: ({ literal: string } | { operators: string[] })[] = [];
  let last = 0;
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    const text = template.slice(last, match.index);
    const first = match[1]?.[0] ?? "";
    const operator = "+#./;?&".includes(first) ? first : "";
    const previous = parts.at(-1);
    if (text) parts.push({ literal: text });
    if (!text && previous && "operators" in previous) previous.operators.push(operator);
    else parts.push({ operators: [operator] });
    last = (match.index ?? 0) + match[0].length;
  }
  const tail = template.slice(last);
  if (tail) parts.push({ literal: tail });
  const expressions = parts.filter((part) => "operators" in part);
  if (expressions.length > MAX_TEMPLATE_EXPRESSIONS) return false;
  let unbounded = 0;
  let pattern = "";
  parts.forEach((part, index) => {
    if ("literal" in part) {
      pattern += escapeLiteral(part.literal);
      return;
    }
    const next = parts[index + 1];
    const stop = next && "literal" in next ? escapeClass(next.literal[0] ?? "") : "";
    if (part.operators.every((operator) => SIMPLE_OPERATORS.has(operator))) {
      // One segment, or adjacent ones: together, still one segment's characters.
      pattern += `[^/?#${stop}]+`;
    } else {
      // An expression that may hold anything (alone, or with others next to it): once only.
      unbounded++;
      const [only = ""] = part.operators;
      pattern += part.operators.length === 1 ? unboundedPattern(only) : ".*";
    }
  });
  if (unbounded > 1) return false;
  return new RegExp(`^${pattern}$`).test(uri);
}

/** Operators whose expansion is one segment: plain `{var}`. */
const SIMPLE_OPERATORS: ReadonlySet<string> = new Set([""]);

function unboundedPattern(operator: string): string {
  if (operator === "?" || operator === "&") return "(?:[?&].*)?";
  if (operator === "/") return "(?:/[^?#]*)?";
  if (operator === ".") return "(?:\\.[^/?#]*)?";
  if (operator === ";") return "(?:;[^/?#]*)?";
  return ".*";
}

function escapeClass(text: string): string {
  return text.replace(/[\\\]^-]/g, "\\$&");
}

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
