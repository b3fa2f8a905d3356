// Registered toolsets (http endpoints, remote MCP servers): what their generic handlers need.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { externalRuntimeDeps } from "./deps";
export { createExternalHandler, type ExternalRuntimeDeps } from "./handler";
