import type { Dispatcher } from "../app/calls/dispatch";
import type { AnyToolDefinition, DeployableTool } from "../tool-definition";
import { type CallHandler, inProcessDispatcher } from "./local-dispatch";

/**
 * Whether the API runs a tool's waited-for calls itself instead of invoking the tool's own
 * function: a built-in that declares what it needs and needs nothing a function of its own
 * exists to isolate — no network, no secret, no caller's account, no fallback (which might
 * need any of them). Such a tool only computes from its input (readability_analyzer) or the
 * stage's configuration (static_links), so running it in the API spares a Lambda invocation,
 * its billed duration and the API's wait for it, with the same code and the same store.
 * Calls the bus delivers still go to the tool's function.
 */
export function runsInApi(tool: AnyToolDefinition): tool is DeployableTool {
  const { needs } = tool;
  return (
    needs !== undefined &&
    needs.network === undefined &&
    needs.secrets === undefined &&
    needs.connections === undefined &&
    needs.fallback === undefined
  );
}

/**
 * A dispatcher that runs the handlers in `inApi` (by handler id) in this process and hands
 * every other call to `elsewhere` (each tool's function, on AWS).
 */
export function inApiFirst(
  elsewhere: Dispatcher,
  inApi: Readonly<Record<string, CallHandler>>,
): Dispatcher {
  const here = inProcessDispatcher(inApi);
  return {
    dispatch: (handlerId, event, signal) =>
      Object.hasOwn(inApi, handlerId)
        ? here.dispatch(handlerId, event, signal)
        : elsewhere.dispatch(handlerId, event, signal),
    async idle() {
      await Promise.all([here.idle?.(), elsewhere.idle?.()]);
    },
  };
}
