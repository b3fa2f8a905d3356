export type { ApiDeps } from "@toolbus/core/compose/api-deps";
export { createApi, MAX_BODY_BYTES } from "./api/app";
export {
  type FetchApp,
  type FunctionUrlEvent,
  type LambdaStreamingRuntime,
  requestOfEvent,
  streamingHandler,
} from "./api/lambda-stream";
export { isStreamedRoute } from "./api/streaming";
export { ADMIN_BOOTSTRAP_ID } from "./common/auth";
export type { HttpEnv } from "./common/env";
export { API_VERSION } from "./common/version";
