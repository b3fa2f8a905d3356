import {
  type CatalogDiff,
  MAX_REGISTERED_TOOLS,
  type McpToolsetRegistration,
  mcpToolDefaults,
  mcpToolsetRegistration,
  type ToolsetRegistration,
} from "@toolbus/wire/model/registered";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import { OutboundError } from "../../outbound/errors";
import { checkUrl, type Resolver } from "../../outbound/ssrf";
import type { HttpClient, SecretSource } from "../../outbound/types";
import type { CatalogStore, Versioned } from "../../ports";
import type { McpProtocol, RemoteDiscovery } from "../../registered/mcp-client";
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
import { checkToolsetClaim } from "./ownership";

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
  now?: () => Date;
}

export interface RegistrationOutcome {
  created: boolean;
  toolset: Versioned<ToolsetSpec>;
  tools: Versioned<ToolSpec>[];
  diff: CatalogDiff;
}

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
    { keepAvailability = false }: { keepAvailability?: boolean } = {},
  ): Promise<RegistrationOutcome> {
    // Planning (with the JSON Schema checks) loads on the first registration, not with
    // the API: registering is an administrator's rare write.
    const {
      checkIdsFree,
      diffTools,
      httpToolsetPlan,
      mcpToolsetPlan,
      secretsOf,
      withAvailability,
    } = await import("../../registered/plan");
    refuseIssues(
      `Toolset ${registration.name}`,
      registrationIssues(registration, this.deps.config),
    );
    const current = await this.deps.catalog.getToolset(registration.name);
    checkToolsetClaim(current, registration);
    const auths =
      registration.kind === "http"
        ? [registration.auth, ...registration.tools.map((tool) => tool.auth)]
        : [registration.auth];
    const secret = await this.requireSecrets(secretsOf(auths));
    const urls =
      registration.kind === "http"
        ? registration.tools.map((tool) => tool.url.replace(/\{[^}]*\}/g, "x"))
        : [registration.url];
    for (const url of new Set(urls)) await this.checkReachable(url);
    const plan =
      registration.kind === "http"
        ? httpToolsetPlan(registration)
        : withProtocols(await this.discover(registration, secret), (remote) =>
            mcpToolsetPlan(registration, remote),
          );

    const catalog = await this.deps.catalog.list();
    checkIdsFree(plan.toolset, plan.tools, catalog);
    const before = catalog.tools.filter((tool) => tool.toolset === registration.name);
    const tools = withAvailability(registration, plan.tools, before, {
      adminsOnly: highestRole(this.deps.config),
      keepAvailability,
    });
    const diff = diffTools(before, tools);
    const stored = await this.deps.catalog.replaceToolset(plan.toolset, tools);
    await this.recordCapabilities(secretsOf(auths), secret);
    return { created: current === undefined, ...stored, diff };
  }

  /** Lists a registered MCP server's tools again and stores the difference. */
  async refresh(
    name: string,
    changes: { renames?: Record<string, string> } = {},
  ): Promise<RegistrationOutcome> {
    const toolset = await this.deps.catalog.getToolset(name);
    if (!toolset) throw new NotFoundError(`Toolset ${name} does not exist.`);
    if (toolset.kind !== "mcp" || !toolset.source) {
      throw new ConflictError(
        `Toolset ${name} is a ${toolset.kind} toolset; only MCP toolsets are refreshed (register an http toolset again to change it).`,
      );
    }
    const registration: McpToolsetRegistration = mcpToolsetRegistration.parse({
      kind: "mcp",
      name,
      description: toolset.description,
      owner: toolset.owner,
      url: toolset.source.url,
      ...(toolset.source.auth ? { auth: toolset.source.auth } : {}),
      renames: { ...toolset.source.renames, ...changes.renames },
      defaults: mcpToolDefaults.parse(toolset.source.defaults ?? {}),
    });
    return this.register(registration, { keepAvailability: true });
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
  ): Promise<RemoteDiscovery> {
    // The MCP SDK's client loads on the first MCP registration or refresh.
    const { discoverRemoteTools, mcpConnection } = await import("../../registered/mcp-client");
    let discovered: RemoteDiscovery;
    try {
      discovered = await discoverRemoteTools(
        mcpConnection(
          registration,
          { secret, http: this.deps.http },
          {
            owner: registration.name,
            upstream: `MCP server ${safeHost(registration.url)}`,
            timeoutMs: DISCOVERY_TIMEOUT_MS,
          },
        ),
        MAX_REGISTERED_TOOLS,
      );
    } catch (error) {
      if (!(error instanceof ToolFailure)) throw error;
      throw new ValidationError(
        `The tools of ${registration.url} could not be listed: ${error.failure.message}`,
        { details: [{ path: "url", message: error.failure.message }] },
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

/** The plan of a server's tools, each recording the generations the server speaks. */
function withProtocols<P extends { tools: ToolSpec[] }>(
  discovered: RemoteDiscovery,
  plan: (tools: RemoteDiscovery["tools"]) => P,
): P {
  const planned = plan(discovered.tools);
  const protocols: McpProtocol[] = discovered.protocols;
  return {
    ...planned,
    tools: planned.tools.map((tool) =>
      tool.implementation.kind === "mcp"
        ? { ...tool, implementation: { ...tool.implementation, protocols } }
        : tool,
    ),
  };
}

/** Host of a URL for messages: never its path or query, which may hold tokens. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the URL";
  }
}
