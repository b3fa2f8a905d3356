import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { createToolHandler, type ToolRuntimeDeps } from "../runtime/tool-handler";
import { type DeployableTool, type ToolNeeds, toolScope } from "../tool-definition";
import { unitFromEnv } from "./entry";
import { offlineHttp, toolDeps } from "./tool";

/**
 * What a tool runs with by its own declaration, on the deployment's pieces: its detectors and
 * fallback, with its fallback's, and an outbound client only if one of them reaches the
 * network. `shared` holds the client and call store to share where the process has them (the
 * API's, running calls itself); a tool's own function makes its own. Both paths build a tool's dependencies here,
 * so a call runs alike whichever path reaches it.
 */
export function declaredToolDeps(
  needs: ToolNeeds,
  deployment: Deployment,
  shared: { http?: HttpClient; calls?: ToolRuntimeDeps["calls"] } = {},
): ToolRuntimeDeps {
  const { network, ...scope } = toolScope(needs);
  const client = network ? (shared.http ?? network(deployment.config.outbound)) : offlineHttp;
  return toolDeps(deployment, client, scope, shared.calls);
}

/**
 * A tool's Lambda handler from its definition alone (functions/tools/<id>.ts): what it runs
 * with is built on the first event and kept for the container's life, and if its function
 * binds secrets they are loaded first. Its bundle holds only what the declaration references.
 */
export function toolEntry(tool: DeployableTool) {
  const handler = createToolHandler(
    tool,
    unitFromEnv((deployment) => declaredToolDeps(tool.needs, deployment)),
  );
  const { secrets } = toolScope(tool.needs);
  if (!secrets) return handler;
  return async (...event: Parameters<typeof handler>) => {
    await secrets();
    return handler(...event);
  };
}
