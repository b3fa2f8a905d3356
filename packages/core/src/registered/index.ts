// Registered toolsets (http endpoints, remote MCP servers): what their generic handlers need.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { registeredRuntimeDeps } from "./deps";
export {
  createRegisteredHandler,
  type RegisteredDefinition,
  type RegisteredRuntimeDeps,
} from "./handler";
export { httpToolDefinition } from "./http-tool";
export { mcpToolDefinition } from "./mcp-tool";
