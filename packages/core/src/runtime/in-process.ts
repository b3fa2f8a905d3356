import type { CallHandler } from "../app/calls/dispatch";
import {
  createRegisteredHandler,
  type RegisteredDefinition,
  type RegisteredRuntimeDeps,
} from "../registered/handler";
import { httpToolDefinition } from "../registered/http-tool";
import { mcpToolDefinition } from "../registered/mcp-tool";
import type { AnyToolDefinition } from "../tool-definition";
import {
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  registeredHandlerId,
  STREAM_HANDLER,
  SUBSCRIPTIONS_HANDLER,
  toolHandlerId,
} from "../wiring";
import { createRecorder, type RecorderDeps } from "./recorder";
import { createStreamWriter, type StreamWriterDeps } from "./stream";
import type { SubscriptionHandlers } from "./subscriptions";
import { createToolHandler, type ToolRuntimeDeps } from "./tool-handler";

/** Each registered kind's runnable tool: this process runs every kind. */
const DEFINE: Record<(typeof REGISTERED_KINDS)[number], RegisteredDefinition> = {
  http: httpToolDefinition,
  mcp: mcpToolDefinition,
};

export interface InProcessDeps {
  tools: readonly AnyToolDefinition[];
  runtime: () => ToolRuntimeDeps;
  recorder: () => RecorderDeps;
  stream: () => Promise<StreamWriterDeps>;
  registered: () => RegisteredRuntimeDeps;
  subscriptions: SubscriptionHandlers;
}

/**
 * Every handler of the wiring table, run in this process (`npm start`, tests), by handler id:
 * the recorder's, the stream's and the dispatcher's resolve with nothing. The composition root loads this module only once a
 * handler is first handed an event (`handlersLoadedOnUse`): on AWS the API dispatches to each
 * handler's own function and never loads it.
 */
export function inProcessHandlers(deps: InProcessDeps): Record<string, CallHandler> {
  const recorder = createRecorder(deps.recorder);
  const streamWriter = createStreamWriter(deps.stream);
  const handlers: Record<string, CallHandler> = {
    [RECORDER_HANDLER]: async (event) => {
      await recorder(event);
      return undefined;
    },
    [STREAM_HANDLER]: async (event) => {
      await streamWriter(event);
      return undefined;
    },
    [SUBSCRIPTIONS_HANDLER]: async (event) => {
      await deps.subscriptions.dispatch(event);
      return undefined;
    },
  };
  for (const tool of deps.tools) {
    handlers[toolHandlerId(tool.spec.id)] = createToolHandler(tool, deps.runtime);
  }
  for (const kind of REGISTERED_KINDS) {
    handlers[registeredHandlerId(kind)] = createRegisteredHandler(
      kind,
      DEFINE[kind],
      deps.registered,
    );
  }
  return handlers;
}
