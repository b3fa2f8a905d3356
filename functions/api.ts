import { createToolbus, deploymentFromEnv } from "@toolbus/core";
import { createApi } from "@toolbus/core/api";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { handle } from "hono/aws-lambda";

/** The HTTPS API. Built at cold start from the environment; `app` is served as-is locally. */
export const app = createApi({
  ...createToolbus(deploymentFromEnv(), {
    tools: builtinTools,
    toolsets: builtinToolsets,
    capabilities: builtinCapabilities,
  }).apiDeps,
  // Behind API Gateway a response is buffered: end event streams before the integration
  // timeout, so followers reconnect with Last-Event-ID (long polling, in effect).
  ...(process.env.AWS_LAMBDA_FUNCTION_NAME ? { followMaxMs: 25_000 } : {}),
});

export const handler = handle(app);
