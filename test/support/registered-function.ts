import { type Deployment, type Dispatcher, DispatchNotStartedError } from "@toolbus/core";
import { registeredDeps } from "@toolbus/core/compose/registered";
import { createRegisteredHandler, mcpToolDefinition } from "@toolbus/core/registered";

/**
 * The API's dispatcher as on AWS for registered MCP tools: functions/registered/mcp.ts on its
 * own deployment, invoked as Lambda's Invoke would (JSON both ways); any other handler cannot
 * start here. `onInvoke` counts the invocations.
 */
export function registeredMcpDispatcher(
  deployment: () => Deployment,
  onInvoke: () => void = () => undefined,
): Dispatcher {
  const mcpFunction = createRegisteredHandler("mcp", mcpToolDefinition, () =>
    registeredDeps(deployment()),
  );
  return {
    async dispatch(handler, event) {
      if (handler !== "registered/mcp") throw new DispatchNotStartedError(`No ${handler} here.`);
      onInvoke();
      const answer = await mcpFunction(JSON.parse(JSON.stringify(event)));
      return answer === undefined ? undefined : JSON.parse(JSON.stringify(answer));
    },
  };
}
