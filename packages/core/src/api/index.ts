export { createApi, MAX_BODY_BYTES } from "./app";
export { ADMIN_BOOTSTRAP_ID } from "./auth";
export type { ApiDeps } from "./deps";
export type { ApiEnv } from "./env";
export {
  type FetchApp,
  type FunctionUrlEvent,
  type LambdaStreamingRuntime,
  requestOfEvent,
  streamingHandler,
} from "./lambda-stream";
export { API_VERSION } from "./openapi";
export { isStreamedRoute } from "./streaming";
