// Registered toolsets (http endpoints, remote MCP servers): their generic handlers.
export {
  createRegisteredHandler,
  type RegisteredDefinition,
  type RegisteredRuntimeDeps,
} from "./handler";
export { httpToolDefinition } from "./http-tool";
export { mcpToolDefinition } from "./mcp-tool";
