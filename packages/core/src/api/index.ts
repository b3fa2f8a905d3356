export { ADMIN_BOOTSTRAP_ID } from "../http/auth";
export type { HttpEnv } from "../http/env";
export { API_VERSION } from "../http/version";
export { createApi, MAX_BODY_BYTES } from "./app";
export type { ApiDeps } from "./deps";
export {
  type FetchApp,
  type FunctionUrlEvent,
  type LambdaStreamingRuntime,
  requestOfEvent,
  streamingHandler,
} from "./lambda-stream";
export { isStreamedRoute } from "./streaming";
