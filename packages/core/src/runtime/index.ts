// The slice of core a bus handler needs: no HTTP framework, no catalog service.
export { type Deployment, deploymentFromEnv } from "../deployment";
export { createRecorder } from "./recorder";
export { createStreamWriter } from "./stream";
export { createSweeper } from "./sweeper";
export { createToolHandler, type ToolRuntimeDeps } from "./tool-handler";
