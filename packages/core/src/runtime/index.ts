// The slice of core a bus handler needs: no HTTP framework, no catalog service.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { recorderDeps, toolRuntimeDeps } from "./deps";
export { createRecorder } from "./recorder";
export { createToolHandler, type ToolRuntimeDeps } from "./tool-handler";
