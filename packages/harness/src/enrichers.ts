import { MCP_HEADERS } from "@toolbus/wire/mcp-surface";
import type { Agent } from "./agent";
import { HARNESS_TABLE, type Harness } from "./harness-table";
import { Tool, toolKey, type UniversalTool } from "./vocabulary";

/**
 * A header whose value the harness reads from an environment variable when it connects, so
 * no secret is written into the file. Each renderer writes it in its harness's own syntax.
 */
export interface EnvHeader {
  /** The variable's name; a harness that insists on a prefix gets it added. */
  env: string;
  /** Written before the value, e.g. `Bearer `. */
  prefix?: string;
  /** An unset variable sends an empty value instead of keeping the server from loading. */
  optional?: boolean;
}

/** How a harness reaches an MCP server: over HTTP, or by starting a local command. */
export type McpServerConfig =
  | {
      url: string;
      headers?: Readonly<Record<string, string>>;
      envHeaders?: Readonly<Record<string, EnvHeader>>;
    }
  | { command: string; args?: readonly string[]; env?: Readonly<Record<string, string>> };

/**
 * What enrichers work on: the agent's universal tools plus the MCP servers those tools need.
 * With `allTools` the agent gets every tool the harness has, and `tools` only matters for the
 * MCP servers it brings in.
 */
export interface ToolMap {
  allTools: boolean;
  tools: readonly UniversalTool[];
  mcpServers: Readonly<Record<string, McpServerConfig>>;
  warnings: readonly string[];
}

/** A pure step from one tool map to the next; it never changes its inputs. */
export type Enricher = (harness: Harness, agent: Agent, toolMap: ToolMap) => ToolMap;

/** The tool map an agent starts with, before any enricher. */
export function initialToolMap(agent: Agent): ToolMap {
  return {
    allTools: agent.tools === undefined,
    tools: [...(agent.tools ?? [])],
    mcpServers: {},
    warnings: [],
  };
}

/** The enrichers applied left to right. */
export function compose(enrichers: readonly Enricher[]): Enricher {
  const steps = [...enrichers];
  return (harness, agent, toolMap) =>
    steps.reduce((map, enricher) => enricher(harness, agent, map), toolMap);
}

export interface AddMcpToolsOptions {
  server: string;
  tools: readonly string[];
  /** Only agents with one of these names (or one of `tags`); neither: every agent. */
  agents?: readonly string[];
  tags?: readonly string[];
  /** How to reach the server, written into the agent file where the harness supports it. */
  config?: McpServerConfig;
}

/** Adds tools of one MCP server to the agents it is meant for. */
export function addMcpTools(options: AddMcpToolsOptions): Enricher {
  // Built now, so a bad server or tool name fails when the enricher is made, not mid-render.
  const added = options.tools.map((tool) => Tool.mcp(options.server, tool));
  const { agents, tags, config, server } = options;
  return (_harness, agent, toolMap) => {
    const targeted = agents !== undefined || tags !== undefined;
    const matches =
      !targeted ||
      (agents?.includes(agent.name) ?? false) ||
      (tags?.some((tag) => agent.tags?.includes(tag)) ?? false);
    if (!matches) return toolMap;
    return {
      ...toolMap,
      tools: [...toolMap.tools, ...added],
      mcpServers: config ? { ...toolMap.mcpServers, [server]: config } : toolMap.mcpServers,
    };
  };
}

/** Removes MCP tools and servers on the given harnesses, saying what it removed. */
export function stripMcpForHarness(harnesses: readonly Harness[]): Enricher {
  const stripped = new Set(harnesses);
  return (harness, _agent, toolMap) => {
    if (!stripped.has(harness)) return toolMap;
    const title = HARNESS_TABLE.harnesses[harness].title;
    const removed = toolMap.tools.filter((tool) => tool.kind === "mcp");
    const servers = Object.keys(toolMap.mcpServers);
    if (removed.length === 0 && servers.length === 0) return toolMap;
    const warnings = [
      ...removed.map((tool) => `${toolKey(tool)} was removed for ${title} (stripMcpForHarness).`),
      ...servers
        .filter((server) => !removed.some((tool) => tool.kind === "mcp" && tool.server === server))
        .map((server) => `MCP server ${server} was removed for ${title} (stripMcpForHarness).`),
    ];
    return {
      ...toolMap,
      tools: toolMap.tools.filter((tool) => tool.kind !== "mcp"),
      mcpServers: {},
      warnings: [...toolMap.warnings, ...warnings],
    };
  };
}

export interface AddToolbusCatalogOptions {
  /** The name the agent file gives Toolbus's MCP server. */
  server?: string;
  /** Toolbus's MCP endpoint, e.g. `https://toolbus.example.com/mcp`. */
  url: string;
  /** Catalog tool ids to offer; the HTTP API fills them from the catalog for the agent. */
  tools: readonly string[];
  /** The environment variable holding the Toolbus API key the harness sends. */
  apiKeyEnv?: string;
  /** The environment variable holding the run id a harness session's calls share. */
  runIdEnv?: string;
}

export const DEFAULT_API_KEY_ENV = "TOOLBUS_API_KEY";
export const DEFAULT_RUN_ID_ENV = "TOOLBUS_RUN_ID";

/**
 * How a harness reaches Toolbus's MCP endpoint: the API key as a bearer token, and the run
 * id that puts every call of one session in one run. The run id is optional: unset, the
 * header is empty and Toolbus gives each request its own run, rather than the harness
 * refusing to load the server.
 */
export function toolbusServerConfig(
  url: string,
  options: { apiKeyEnv?: string; runIdEnv?: string } = {},
): McpServerConfig {
  return {
    url,
    envHeaders: {
      Authorization: { env: options.apiKeyEnv ?? DEFAULT_API_KEY_ENV, prefix: "Bearer " },
      [MCP_HEADERS.runId]: { env: options.runIdEnv ?? DEFAULT_RUN_ID_ENV, optional: true },
    },
  };
}

/** Offers Toolbus's own catalog tools as tools of the Toolbus MCP server. */
export function addToolbusCatalog(options: AddToolbusCatalogOptions): Enricher {
  if (options.tools.length === 0) {
    return (_harness, _agent, toolMap) => ({
      ...toolMap,
      warnings: [
        ...toolMap.warnings,
        "No Toolbus catalog tools are available to this agent; none were added.",
      ],
    });
  }
  return addMcpTools({
    server: options.server ?? "toolbus",
    tools: options.tools,
    config: toolbusServerConfig(options.url, options),
  });
}
