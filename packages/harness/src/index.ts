export { AGENT_NAME, type Agent, validateAgent } from "./agent";
export {
  type AddMcpToolsOptions,
  type AddToolbusCatalogOptions,
  addMcpTools,
  addToolbusCatalog,
  compose,
  DEFAULT_API_KEY_ENV,
  DEFAULT_RUN_ID_ENV,
  type Enricher,
  type EnvHeader,
  initialToolMap,
  type McpServerConfig,
  stripMcpForHarness,
  type ToolMap,
  toolbusServerConfig,
} from "./enrichers";
export {
  HARNESS_TABLE,
  HARNESSES,
  type Harness,
  type HarnessFacts,
  type HarnessTable,
  TABLE_TOOLS,
  type TableTool,
} from "./harness-table";
export {
  type DisallowedTool,
  disallowedNames,
  type MappedTools,
  type MapToolsOptions,
  mapTools,
  mcpToolName,
  nativeNames,
} from "./mapping";
export {
  currentHarnessSection,
  harnessReadmeSection,
  README_END,
  README_START,
  withHarnessSection,
} from "./readme";
export { envHeaderValue, harnessEnvName } from "./render/env";
export { agentFilePath, formatAgentFile } from "./render/frontmatter";
export { type McpServersFile, mcpServersFile } from "./render/mcp-config";
export {
  OPENCODE_MODES,
  OPENCODE_TOOL_FORMATS,
  type OpencodeMode,
  type OpencodeToolFormat,
  opencodePermissionKey,
} from "./render/opencode";
export { OUTPUT_FORMATS, type OutputFormat } from "./render/output-format";
export { type RenderedAgentFile, type RenderOptions, render, renderAll } from "./render/render";
export {
  type AgentInput,
  agentFromInput,
  agentInput,
  type CatalogContext,
  type EnricherSpec,
  enricherFromSpec,
  enricherSpec,
  type RenderRequest,
  renderRequest,
} from "./schemas";
export {
  type BuiltinToolName,
  expandBuiltin,
  type ParsedTool,
  parseTool,
  TOOL_NAMES,
  Tool,
  toolFromString,
  toolKey,
  type UniversalTool,
  universalToolString,
} from "./vocabulary";
