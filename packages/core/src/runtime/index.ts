// The slice of core a bus handler needs: no HTTP framework, no catalog service.
export { type Deployment, deploymentFromEnv } from "../deployment";
export {
  offlineToolRuntimeDeps,
  recorderDeps,
  sweeperDeps,
  toolRuntimeDeps,
} from "./deps";
export { createRecorder } from "./recorder";
export { createStreamWriter, streamWriterDeps } from "./stream";
export { createSweeper } from "./sweeper";
export { createToolHandler, type ToolRuntimeDeps } from "./tool-handler";
