import { CALL_TOOL, MCP_SURFACES, SEARCH_TOOLS } from "@toolbus/wire/mcp-surface";
import * as z from "zod";
import { AGENT_NAME, AGENT_NAME_RULE, type Agent } from "./agent";
import {
  addMcpTools,
  addToolbusCatalog,
  type Enricher,
  type McpServerConfig,
  stripMcpForHarness,
} from "./enrichers";
import { HARNESSES } from "./harness-table";
import { OPENCODE_MODES, OPENCODE_TOOL_FORMATS } from "./render/opencode";
import { OUTPUT_FORMATS } from "./render/output-format";
import { toolFromString, universalToolString } from "./vocabulary";

// The wire shapes of agent rendering. Strings stay strings here (no transforms), so the
// OpenAPI document shows what callers send; handlers turn them into typed values.

const HARNESS_CHOICES = [...HARNESSES, "all"] as const;

const agentName = z.string().regex(AGENT_NAME, `Must be ${AGENT_NAME_RULE}.`);
const mcpServerName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 letters, digits, _ or -.");
const mcpToolName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, "1-128 letters, digits, _, . or -.");
const label = z.string().min(1).max(64);
const stringMap = z.record(z.string().min(1).max(256), z.string().max(4096));
/** An environment variable's name, as every harness's `${VAR}` / `{env:VAR}` syntax reads it. */
const envName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,127}$/,
    "A variable name: letters, digits and _, not starting with a digit.",
  );
const headerName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,128}$/, "A header name: letters, digits and -.");
const envHeader = z
  .object({
    env: envName,
    prefix: z.string().max(64).optional(),
    optional: z.boolean().optional(),
  })
  .strict();
/** A disallowed tool: a universal tool string or a harness-native name. */
const disallowedString = z
  .string()
  .regex(/^[^\s,]{1,256}$/, "A tool name without whitespace or commas.");

export const agentInput = z
  .object({
    name: agentName,
    description: z.string().trim().min(1).max(2000),
    prompt: z.string().max(100_000),
    tools: z.array(universalToolString).max(200).optional(),
    model: z.string().min(1).max(200).optional(),
    mode: label.optional(),
    role: label.optional(),
    tags: z.array(label).max(50).optional(),
    disallowedTools: z.array(disallowedString).max(200).optional(),
  })
  .strict();
export type AgentInput = z.infer<typeof agentInput>;

export const mcpServerConfig = z.union([
  z
    .object({
      url: z.url({ protocol: /^https?$/ }),
      headers: stringMap.optional(),
      /** Headers each harness reads from an environment variable, in its own syntax. */
      envHeaders: z.record(headerName, envHeader).optional(),
    })
    .strict(),
  z
    .object({
      command: z.string().min(1).max(1024),
      args: z.array(z.string().max(4096)).max(100).optional(),
      env: stringMap.optional(),
    })
    .strict(),
]);

export const enricherSpec = z.discriminatedUnion(
  "type",
  [
    z
      .object({
        type: z.literal("addMcpTools"),
        server: mcpServerName,
        tools: z.array(mcpToolName).min(1).max(200),
        agents: z.array(agentName).max(200).optional(),
        tags: z.array(label).max(50).optional(),
        config: mcpServerConfig.optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal("stripMcpForHarness"),
        harnesses: z.array(z.enum(HARNESSES)).min(1),
      })
      .strict(),
    z
      .object({
        type: z.literal("addToolbusCatalog"),
        server: mcpServerName.optional(),
        /** Toolbus's MCP endpoint; default: this API's own `/mcp`. */
        url: z.url({ protocol: /^https?$/ }).optional(),
        /** The variable holding the API key the harness sends; default `TOOLBUS_API_KEY`. */
        apiKeyEnv: envName.optional(),
        /** The variable holding the run id a session's calls share; default `TOOLBUS_RUN_ID`. */
        runIdEnv: envName.optional(),
        /**
         * `catalog` (default): the agent's available tools, each by name; `search`: the MCP
         * search surface's two tools, so the file never changes as the catalog does.
         */
        surface: z.enum(MCP_SURFACES).optional(),
      })
      .strict(),
  ],
  {
    error: "Each enricher needs a type: addMcpTools, stripMcpForHarness or addToolbusCatalog.",
  },
);
export type EnricherSpec = z.infer<typeof enricherSpec>;

export const renderRequest = z
  .object({
    harness: z.enum(HARNESS_CHOICES, {
      error: `harness must be one of ${HARNESS_CHOICES.join(", ")}.`,
    }),
    agent: agentInput,
    enrichers: z.array(enricherSpec).max(20).optional(),
    format: z.enum(OUTPUT_FORMATS).optional(),
    opencodeTools: z.enum(OPENCODE_TOOL_FORMATS).optional(),
    opencodeMode: z.enum(OPENCODE_MODES).optional(),
  })
  .strict();
export type RenderRequest = z.infer<typeof renderRequest>;

/** The typed agent a validated request describes. */
export function agentFromInput(input: AgentInput): Agent {
  return {
    name: input.name,
    description: input.description,
    prompt: input.prompt,
    ...(input.tools ? { tools: input.tools.map(toolFromString) } : {}),
    ...(input.model !== undefined ? { model: input.model } : {}),
    ...(input.mode !== undefined ? { mode: input.mode } : {}),
    ...(input.role !== undefined ? { role: input.role } : {}),
    ...(input.tags ? { tags: input.tags } : {}),
    ...(input.disallowedTools ? { disallowedTools: input.disallowedTools } : {}),
  };
}

/** What the caller supplies for addToolbusCatalog: the catalog's tools for the agent, and its URL. */
export interface CatalogContext {
  tools: readonly string[];
  defaultUrl: string;
}

/** A built-in enricher from its declarative form. */
export function enricherFromSpec(spec: EnricherSpec, catalog?: CatalogContext): Enricher {
  switch (spec.type) {
    case "addMcpTools":
      return addMcpTools({
        server: spec.server,
        tools: spec.tools,
        ...(spec.agents ? { agents: spec.agents } : {}),
        ...(spec.tags ? { tags: spec.tags } : {}),
        ...(spec.config ? { config: spec.config as McpServerConfig } : {}),
      });
    case "stripMcpForHarness":
      return stripMcpForHarness(spec.harnesses);
    case "addToolbusCatalog": {
      const url = spec.url ?? catalog?.defaultUrl ?? "/mcp";
      const search = spec.surface === "search";
      return addToolbusCatalog({
        ...(spec.server ? { server: spec.server } : {}),
        url: search ? withSearchSurface(url) : url,
        tools: search ? [SEARCH_TOOLS, CALL_TOOL] : (catalog?.tools ?? []),
        ...(spec.apiKeyEnv ? { apiKeyEnv: spec.apiKeyEnv } : {}),
        ...(spec.runIdEnv ? { runIdEnv: spec.runIdEnv } : {}),
      });
    }
  }
}

/** The endpoint with `surface=search` in its query (a relative one stays relative). */
function withSearchSurface(url: string): string {
  const parsed = new URL(url, "http://relative.invalid");
  parsed.searchParams.set("surface", "search");
  return parsed.origin === "http://relative.invalid"
    ? `${parsed.pathname}${parsed.search}`
    : parsed.href;
}
