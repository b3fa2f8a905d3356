// Registered toolsets (http endpoints, remote MCP servers): what their generic handlers need.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { registeredRuntimeDeps } from "./deps";
export { createRegisteredHandler, type RegisteredRuntimeDeps } from "./handler";
