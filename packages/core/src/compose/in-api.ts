import type { Deployment } from "../deployment";
import { createToolHandler } from "../runtime/tool-handler";
import type { DeployableTool } from "../tool-definition";
import { toolHandlerId } from "../wiring";
import { callsOf } from "./calls";
import type { CallHandler } from "./local-dispatch";
import { declaredToolDeps } from "./tool-entry";

/**
 * The handlers of the tools the API runs itself (`runsInApi`), by handler id, each built as
 * its own function builds it (`declaredToolDeps`), on the API's call store: a call the API
 * just wrote is claimed without reading it back. Loaded with the first such call.
 */
export function inApiHandlers(
  deployment: Deployment,
  tools: readonly DeployableTool[],
): Record<string, CallHandler> {
  const calls = callsOf(deployment);
  const handlers: Record<string, CallHandler> = {};
  for (const tool of tools) {
    const deps = declaredToolDeps(tool.needs, deployment, { calls });
    handlers[toolHandlerId(tool.spec.id)] = createToolHandler(tool, () => deps);
  }
  return handlers;
}
