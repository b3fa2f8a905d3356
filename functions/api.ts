import { createApi } from "@toolbus/core/api";
import { deploymentFromEnv, withFunctionSecrets } from "@toolbus/core/deployment";
import { lambdaDispatcherFromEnv } from "@toolbus/core/dispatch";
import { createToolbus } from "@toolbus/core/toolbus";
import { builtinTools, builtinToolsets } from "@toolbus/tools/builtin";
import { builtinCapabilities } from "@toolbus/tools/capabilities";
import { handle } from "hono/aws-lambda";

/*
 * Modules, not the packages' indexes: this function is split into chunks (stacks/bundling.ts),
 * and a chunk holds every module an index re-exports, so the code the API loads only on first
 * use (rendering, MCP, each tool's parsers) would load with the function.
 */

/**
 * On AWS, calls a caller waits for are run by invoking each tool's own function (the stack
 * names them in TOOLBUS_FUNCTIONS); locally it is unset and the handlers run in this process.
 */
const dispatcher = lambdaDispatcherFromEnv();

const toolbus = createToolbus(
  deploymentFromEnv(),
  { tools: builtinTools, toolsets: builtinToolsets, capabilities: builtinCapabilities },
  dispatcher ? { dispatcher } : {},
);

/** Resolves once calls run in this process have been announced: `npm start` waits on stop. */
export const settled = () => toolbus.settled();

/** The HTTPS API. Built at cold start from the environment; `app` is served as-is locally. */
export const app = createApi({
  ...toolbus.apiDeps,
  // Behind API Gateway a response is buffered: an event stream ends once it has sent events, or
  // before the integration timeout, and followers reconnect with Last-Event-ID (long polling).
  // Locally this process alone writes the table: the recorder's appends and the API's key
  // revocations wake streams themselves, so idle streams wait without polling; a slow poll
  // stays as a safety net.
  ...(process.env.AWS_LAMBDA_FUNCTION_NAME
    ? { followMaxMs: 25_000, followBuffered: true }
    : { followIntervalMs: 60_000, keyCheckMs: 60_000 }),
});

/** The admin key and the tools' secrets are bound: read from SSM on the first request. */
export const handler = withFunctionSecrets(handle(app));
