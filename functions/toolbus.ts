import { deploymentFromEnv } from "@toolbus/core/deployment";
import { lambdaDispatcherFromEnv } from "@toolbus/core/dispatch";
import { createToolbus } from "@toolbus/core/toolbus";
import { builtinTools, builtinToolsets } from "@toolbus/tools/builtin";
import { builtinCapabilities } from "@toolbus/tools/capabilities";

/*
 * Not an entry point: what both of the API's entry points (api.ts behind API Gateway,
 * api-stream.ts behind the streaming Function URL) serve, built at cold start from the
 * environment. Modules, not the packages' indexes: the API is split into chunks
 * (stacks/bundling.ts), and a chunk holds every module an index re-exports, so code loaded
 * only on first use (rendering, MCP, each tool's parsers) would load with the function.
 */

/**
 * On AWS, calls a caller waits for are run by invoking each tool's own function (the stack
 * names them in TOOLBUS_FUNCTIONS); locally it is unset and the handlers run in this process.
 */
const dispatcher = lambdaDispatcherFromEnv();

export const toolbus = createToolbus(
  deploymentFromEnv(),
  { tools: builtinTools, toolsets: builtinToolsets, capabilities: builtinCapabilities },
  dispatcher ? { dispatcher } : {},
);

/** The stage's streaming endpoint (its Function URL, set by the stack), without a trailing `/`. */
export const streamUrl = process.env.TOOLBUS_STREAM_URL?.replace(/\/+$/, "") || undefined;
