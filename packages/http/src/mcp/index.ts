export { MCP_HEADERS } from "@toolbus/wire/mcp-surface";
export { callToolResult, invalidInputResult, META } from "./results";
export { MCP_PATH, registerMcpRoutes } from "./route";
export { CALL_ID_META, createMcpServer, type McpDeps, type McpRequestContext } from "./server";
export {
  INPUT_PROPERTY,
  type McpSchema,
  mcpInputSchema,
  mcpOutputSchema,
  OUTPUT_PROPERTY,
  structuredContentOf,
  toMcpTool,
  toolInput,
} from "./tools";
