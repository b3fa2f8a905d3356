import { createToolbus, deploymentFromEnv } from "@toolbus/core";
import { createApi } from "@toolbus/core/api";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { handle } from "hono/aws-lambda";

/** The HTTPS API. Built at cold start from the environment; `app` is served as-is locally. */
export const app = createApi(
  createToolbus(deploymentFromEnv(), { tools: builtinTools, toolsets: builtinToolsets }).apiDeps,
);

export const handler = handle(app);
