import type { Principal } from "@toolbus/wire/model/call";
import { isConnectionHeader } from "@toolbus/wire/model/implementation";
import {
  type CatalogDiff,
  type HeldReview,
  MAX_REGISTERED_TOOLS,
  type McpToolsetRegistration,
  type ToolsetRegistration,
} from "@toolbus/wire/model/registered";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { connectionSecret } from "../../connections/credentials";
import type { ConnectionTokens } from "../../connections/service";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import { OutboundError } from "../../outbound/errors";
import { checkUrl, type Resolver } from "../../outbound/ssrf";
import type { HttpClient, SecretSource } from "../../outbound/types";
import type { CatalogStore, EventSink, Versioned } from "../../ports";
import type { Clash } from "../../registered/clashes";
import type { RemoteDiscovery } from "../../registered/mcp-client";
import { referencedSecrets, secretDetectors } from "../../registered/secrets";
import { ToolFailure } from "../../tool-definition";
import { highestRole } from "../access";
import {
  type CapabilityDetector,
  networkCapability,
  withDetectors,
} from "../capabilities/detectors";
import type { CapabilityService } from "../capabilities/service";
import { refuseIssues, registrationIssues } from "./checks";
import type { HeldChanges, HeldSummary, ToolsetReview } from "./held-changes";
import { toolsetClaimRefusal } from "./ownership";
import { storedRegistration } from "./stored-registration";

export interface RegisteredToolsetsDeps {
  catalog: CatalogStore;
  /** Stores what a registration's secrets and network make available. */
  capabilities: Pick<CapabilityService, "record">;
  config: StageConfig;
  http: HttpClient;
  lookup: Resolver;
  /** Secrets by name, read now (on AWS from the stage's SSM secrets). */
  readSecrets(names: readonly string[]): Promise<SecretSource>;
  /** The stage's own capability detectors; registered secrets add their own. */
  detectors: readonly CapabilityDetector[];
  /** Where changed tool definitions are announced (ToolDefinitionsChanged). */
  events: EventSink;
  /**
   * People's connected accounts: discovery of a server that takes each caller's own token
   * (`auth.provider`) sends the registering administrator's. Absent: it sends none.
   */
  connections?: ConnectionTokens;
  now?: () => Date;
}

/** Who registers or refreshes: whose own connection discovery may use. */
export interface RegisteringAs {
  by?: Principal;
}

export interface RegistrationOutcome {
  created: boolean;
  toolset: Versioned<ToolsetSpec>;
  tools: Versioned<ToolSpec>[];
  diff: CatalogDiff;
  /** Tool ids whose change waits for review, by kind (pending only). */
  held: HeldSummary;
}

export type { HeldSummary, ToolsetReview } from "./held-changes";

/** How long listing a remote MCP server's tools may take at registration. */
const DISCOVERY_TIMEOUT_MS = 15_000;

/**
 * Registered toolsets: http endpoints and remote MCP servers that become catalog entries with
 * no code and no deploy. Everything is checked (names, owners, schemas, URLs, secrets, the
 * server's answer) before one transactional write, so a refused registration changes nothing.
 */
export class RegisteredToolsets {
  constructor(private readonly deps: RegisteredToolsetsDeps) {}

  /**
   * Registers a toolset, or registers it again. Who may use each tool: what the registration
   * states (an MCP server's `defaults.availability`, an http tool's `availability`) applies;
   * when it states nothing, a tool already in the catalog keeps its availability and a new one
   * is offered to the stage's highest role only, until an administrator widens it. A refresh
   * (`keepAvailability`) keeps every existing tool's availability whatever the stored
   * registration states: an administrator's per-tool choice is never undone behind their back.
   */
  async register(
    registration: ToolsetRegistration,
    as: RegisteringAs = {},
  ): Promise<RegistrationOutcome> {
    return this.#register(registration, { refresh: false, ...as });
  }

  /**
   * A new registration pins what the server declares now. Registering again or refreshing
   * (`refresh`, which also keeps every existing tool's availability) applies the
   * registration's own fields at once and, unless it follows its server, holds changed
   * definitions for review and serves the pins (held-changes.ts, pin.ts).
   */
  async #register(
    registration: ToolsetRegistration,
    { refresh, by }: { refresh: boolean } & RegisteringAs,
  ): Promise<RegistrationOutcome> {
    // Planning (with the JSON Schema checks) loads on the first registration, not with
    // the API: registering is an administrator's rare write.
    const { checkIdsFree, diffTools, httpToolsetPlan, secretsOf, withAvailability } = await import(
      "../../registered/plan"
    );
    refuseIssues(
      `Toolset ${registration.name}`,
      registrationIssues(registration, this.deps.config),
    );
    const current = await this.deps.catalog.getToolset(registration.name);
    // A change of kind is refused at once; a name that is taken is reported with every other
    // clash of the registration's names (an http toolset's now, an MCP server's once listed).
    const claim = toolsetClaimRefusal(current, registration);
    if (claim && !claim.taken) throw claim.error;
    if (registration.kind === "http") await this.#refuseClashes(registration, current, claim, []);
    const auths =
      registration.kind === "http"
        ? [registration.auth, ...registration.tools.map((tool) => tool.auth)]
        : [registration.auth];
    let secret: SecretSource;
    let discovered: RemoteDiscovery | undefined;
    try {
      secret = await this.requireSecrets(secretsOf(auths));
      const urls =
        registration.kind === "http"
          ? registration.tools.map((tool) => tool.url.replace(/\{[^}]*\}/g, "x"))
          : [registration.url];
      for (const url of new Set(urls)) await this.checkReachable(url);
      discovered =
        registration.kind === "mcp" ? await this.discover(registration, secret, by) : undefined;
    } catch (error) {
      // A taken name is the first thing to change: said even when the server cannot be listed.
      if (claim?.taken && error instanceof ValidationError) {
        await this.#refuseClashes(registration, current, claim, []);
      }
      throw error;
    }
    if (registration.kind === "mcp") {
      await this.#refuseClashes(registration, current, claim, discovered?.tools ?? []);
    }
    const plan =
      registration.kind === "http"
        ? httpToolsetPlan(registration)
        : await this.#planMcp(registration, discovered?.tools ?? [], discovered?.protocols);

    const catalog = await this.deps.catalog.list();
    const before = catalog.tools.filter((tool) => tool.toolset === registration.name);
    const planned = withAvailability(registration, plan.tools, before, {
      adminsOnly: highestRole(this.deps.config),
      keepAvailability: refresh,
    });
    let tools = planned;
    let review: HeldReview | null = null;
    let announce: (() => Promise<HeldSummary>) | undefined;
    // A registered server is held to its pins whether it is refreshed or registered again:
    // registering again changes the administrator's fields, not what the server may declare.
    if (registration.kind === "mcp" && current?.kind === "mcp" && discovered) {
      ({ tools, review, announce } = await (await this.#held()).onRefresh(
        registration,
        before,
        planned,
        discovered,
      ));
    }
    checkIdsFree(plan.toolset, tools, catalog);
    const diff = diffTools(before, tools);
    const stored = await this.deps.catalog.replaceToolset(plan.toolset, tools, { review });
    await this.recordCapabilities(secretsOf(auths), secret);
    const held = announce ? await announce() : { added: [], changed: [], removed: [] };
    return { created: current === undefined, ...stored, diff, held };
  }

  /**
   * Refuses a registration whose names are not free, every clash in one answer: the toolset's
   * name when it is a built-in's or another owner's (a 409, as before), tool ids given twice
   * and ids other toolsets hold (a 400), each in `details` with its path and a free name to
   * give instead (registered/clashes.ts). `remote`: an MCP server's tools as listed.
   */
  async #refuseClashes(
    registration: ToolsetRegistration,
    current: ToolsetSpec | undefined,
    claim: ReturnType<typeof toolsetClaimRefusal>,
    remote: RemoteDiscovery["tools"],
  ): Promise<void> {
    const { clashError, freeToolsetName, idClaims, idClashes } = await import(
      "../../registered/clashes"
    );
    const { snakeCase } = await import("../../registered/plan");
    const { remoteNameOf } = await import("../../registered/pin");
    const catalog = await this.deps.catalog.list();
    const taken = claim?.taken ?? false;
    const suggested = new Set<string>();
    const clashes: Clash[] = [];
    if (claim && taken) {
      const to = freeToolsetName(registration.name, registration.kind, catalog, suggested);
      clashes.push({
        path: "name",
        message: `${claim.error.message} Register it under another name, e.g. "${to}".`,
        suggestion: to,
      });
    }
    // Registering an MCP server again or refreshing it holds added tools for review: their
    // ids take nothing until accepted (accepting checks them then).
    const holding =
      registration.kind === "mcp" && current?.kind === "mcp" && registration.updates !== "follow";
    const pinned = new Set(
      catalog.tools.filter((tool) => tool.toolset === registration.name).map(remoteNameOf),
    );
    clashes.push(
      ...idClashes({
        toolset: registration,
        claims: idClaims(registration, remote, snakeCase),
        catalog,
        nameTaken: taken,
        suggested,
        ...(holding && !taken
          ? {
              served: (c: { remoteName?: string }) =>
                c.remoteName === undefined || pinned.has(c.remoteName),
            }
          : {}),
      }),
    );
    if (clashes.length > 0) throw clashError(clashes, taken);
  }

  /** The tools of an MCP registration as planned today, with the generations its server speaks. */
  async #planMcp(
    registration: McpToolsetRegistration,
    remote: RemoteDiscovery["tools"],
    protocols: readonly string[] | undefined,
  ): Promise<{ toolset: ToolsetSpec; tools: ToolSpec[] }> {
    const { mcpToolsetPlan } = await import("../../registered/plan");
    const { withProtocolsOf } = await import("./held-changes");
    const planned = mcpToolsetPlan(registration, remote);
    return { ...planned, tools: withProtocolsOf(planned.tools, protocols) };
  }

  /** What is held for review on a registered MCP toolset, change by change. */
  async review(name: string): Promise<ToolsetReview> {
    return (await this.#held()).review(name);
  }

  /** Serves the chosen pending changes (all when `ids` is absent); see held-changes.ts. */
  async accept(
    name: string,
    ids: readonly string[] | undefined,
    expectedRevision?: number,
  ): Promise<{ decided: string[]; review: ToolsetReview }> {
    return (await this.#held()).accept(name, ids, expectedRevision);
  }

  /** Rejects the chosen pending changes (all when `ids` is absent); see held-changes.ts. */
  async reject(
    name: string,
    ids: readonly string[] | undefined,
    expectedRevision?: number,
  ): Promise<{ decided: string[]; review: ToolsetReview }> {
    return (await this.#held()).reject(name, ids, expectedRevision);
  }

  /** The review of changed definitions loads on a refresh or a review, never with a call. */
  async #held(): Promise<HeldChanges> {
    const { HeldChanges } = await import("./held-changes");
    return new HeldChanges(this.deps);
  }

  /** Lists a registered MCP server's tools again and stores the difference. */
  async refresh(
    name: string,
    changes: { renames?: Record<string, string> } = {},
    as: RegisteringAs = {},
  ): Promise<RegistrationOutcome> {
    const toolset = await this.deps.catalog.getToolset(name);
    if (!toolset) throw new NotFoundError(`Toolset ${name} does not exist.`);
    if (toolset.kind !== "mcp" || !toolset.source) {
      throw new ConflictError(
        `Toolset ${name} is a ${toolset.kind} toolset; only MCP toolsets are refreshed (register an http toolset again to change it).`,
      );
    }
    return this.#register(storedRegistration(toolset, changes.renames), {
      refresh: true,
      ...as,
    });
  }

  /** Removes a registered toolset and all its tools; built-in toolsets stay. */
  async remove(name: string, expectedRevision?: number): Promise<{ removed: string[] }> {
    const toolset = await this.deps.catalog.getToolset(name);
    if (!toolset) throw new NotFoundError(`Toolset ${name} does not exist.`);
    if (toolset.kind === "builtin") {
      throw new ConflictError(
        `Toolset ${name} is built in (owner ${toolset.owner}); it ships with the deploy and cannot be removed here. Disable its tools instead.`,
      );
    }
    return { removed: await this.deps.catalog.removeToolset(name, expectedRevision) };
  }

  /** Detectors for the secrets registered toolsets reference (and network), for a refresh. */
  async detectors(): Promise<{ detectors: CapabilityDetector[]; secret: SecretSource }> {
    const { toolsets, tools } = await this.deps.catalog.list();
    const names = referencedSecrets(toolsets, tools);
    const secret = await this.deps.readSecrets(names);
    const registered = tools.some((tool) => tool.implementation.kind !== "builtin");
    return {
      detectors: withDetectors(
        [],
        [...(registered ? [networkCapability] : []), ...secretDetectors(names)],
      ),
      secret,
    };
  }

  private async requireSecrets(names: readonly string[]): Promise<SecretSource> {
    const secret = await this.deps.readSecrets(names);
    const missing = names.filter((name) => !secret(name));
    if (missing.length > 0) {
      const list = missing.join(", ");
      throw new ValidationError(
        `The secret ${list} is not set on this stage. Set it first (locally an environment variable; on AWS \`npx sst secrets set ${missing[0]} <value> --stage <stage>\`), then register again.`,
        {
          details: missing.map((name) => ({ path: "auth.secret", message: `${name} is not set` })),
        },
      );
    }
    return secret;
  }

  /** The SSRF guard, at registration: a URL that resolves to a forbidden address is refused. */
  private async checkReachable(url: string): Promise<void> {
    try {
      await checkUrl(url, this.deps.config.outbound, this.deps.lookup);
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      const host = safeHost(url);
      const message =
        error.kind === "blocked"
          ? `${host} resolves to an address this stage may not reach (${error.message}). Add it to outbound.allowHosts in the stage configuration if it is meant to be reached.`
          : error.kind === "network"
            ? `${host} could not be resolved: it is not reachable from this stage.`
            : `The URL ${host} is not allowed: ${error.message}.`;
      throw new ValidationError(message, { details: [{ path: "url", message }] });
    }
  }

  /**
   * The server's tools, over the newest generation it speaks, and which generations those are
   * (2026-07-28 answers `server/discover`, 2025-11-25 answers `initialize`).
   */
  private async discover(
    registration: McpToolsetRegistration,
    secret: SecretSource,
    by: Principal | undefined,
  ): Promise<RemoteDiscovery> {
    // The MCP SDK's client loads on the first MCP registration or refresh.
    const { discoverRemoteTools, mcpConnection } = await import("../../registered/mcp-client");
    const { server, access, withoutToken } = await this.discoveryAccess(registration, secret, by);
    let discovered: RemoteDiscovery;
    try {
      discovered = await discoverRemoteTools(
        mcpConnection(server, access, {
          owner: registration.name,
          upstream: `MCP server ${safeHost(registration.url)}`,
          timeoutMs: DISCOVERY_TIMEOUT_MS,
        }),
        MAX_REGISTERED_TOOLS,
      );
    } catch (error) {
      if (!(error instanceof ToolFailure)) throw error;
      // Listed without a token: the server may want one to list its tools too.
      const hint = !withoutToken
        ? ""
        : by && this.deps.connections
          ? ` It was asked without a token: you have no working ${withoutToken} connection. Connect your own ${withoutToken} account and register again, or let the server list its tools without one.`
          : ` It was asked without a token (auth.provider ${withoutToken}: no caller's token at registration); the server must list its tools without one.`;
      throw new ValidationError(
        `The tools of ${registration.url} could not be listed: ${error.failure.message}${hint}`,
        { details: [{ path: "url", message: `${error.failure.message}${hint}` }] },
      );
    }
    const { tools } = discovered;
    if (tools.length > MAX_REGISTERED_TOOLS) {
      throw new ValidationError(
        `The server lists more than ${MAX_REGISTERED_TOOLS} tools; a toolset holds at most ${MAX_REGISTERED_TOOLS}.`,
      );
    }
    if (tools.length === 0) {
      throw new ValidationError(`The server at ${registration.url} lists no tools.`);
    }
    return discovered;
  }

  /**
   * How discovery reaches the server. A server taking each caller's own token is asked with
   * the registering administrator's own token at that provider when they have a working
   * connection (and the stage's connections are wired in), else with no auth header:
   * `withoutToken` then names the provider, for the refusal's words.
   */
  private async discoveryAccess(
    registration: McpToolsetRegistration,
    secret: SecretSource,
    by: Principal | undefined,
  ): Promise<{
    server: Pick<McpToolsetRegistration, "url" | "auth">;
    access: { secret: SecretSource; http: HttpClient };
    withoutToken?: string;
  }> {
    const { auth, url } = registration;
    const http = this.deps.http;
    if (!auth || !isConnectionHeader(auth))
      return { server: registration, access: { secret, http } };
    const answer =
      by && this.deps.connections
        ? await this.deps.connections.accessToken(by, auth.provider, auth.scopes ?? [])
        : undefined;
    if (!answer?.ok)
      return { server: { url }, access: { secret, http }, withoutToken: auth.provider };
    const name = connectionSecret(auth.provider);
    return {
      server: registration,
      access: { secret: (asked) => (asked === name ? answer.token : undefined), http },
    };
  }

  private async recordCapabilities(names: readonly string[], secret: SecretSource) {
    await this.deps.capabilities.record(
      withDetectors(
        this.deps.detectors.filter((d) => d.name === networkCapability.name),
        [networkCapability, ...secretDetectors(names)],
      ),
      secret,
    );
  }
}

/** Host of a URL for messages: never its path or query, which may hold tokens. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the URL";
  }
}
