import type { CapabilityDetector } from "../app/capabilities/detectors";
import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { createRegisteredHandler, type RegisteredDefinition } from "../registered/handler";
import { httpToolDefinition } from "../registered/http-tool";
import { mcpToolDefinition } from "../registered/mcp-tool";
import { createRecorder } from "../runtime/recorder";
import { createStreamWriter } from "../runtime/stream";
import type { SubscriptionHandlers } from "../runtime/subscriptions";
import { createToolHandler } from "../runtime/tool-handler";
import type { AnyToolDefinition } from "../tool-definition";
import {
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  registeredHandlerId,
  STREAM_HANDLER,
  SUBSCRIPTIONS_HANDLER,
  toolHandlerId,
} from "../wiring";
import { callsOf } from "./calls";
import { callerConnections } from "./connections-on-use";
import { lateAnnouncementsOf } from "./late-announcements";
import type { CallHandler } from "./local-dispatch";
import { recorderDeps } from "./recorder";
import { type RegisteredCatalog, registeredDeps } from "./registered";
import { streamWriterDeps } from "./stream";
import { toolDeps } from "./tool";
import { declaredToolDeps } from "./tool-entry";

/** Each registered kind's runnable tool: this process runs every kind. */
const DEFINE: Record<(typeof REGISTERED_KINDS)[number], RegisteredDefinition> = {
  http: httpToolDefinition,
  mcp: mcpToolDefinition,
};

export interface InProcessUnits {
  deployment: Deployment;
  tools: readonly AnyToolDefinition[];
  /** The outbound client the tools that reach the network share. */
  http: HttpClient;
  capabilities: readonly CapabilityDetector[];
  /** The catalog registered tools are read from (the API's cached one, in this process). */
  catalog: RegisteredCatalog;
  subscriptions: SubscriptionHandlers;
}

/**
 * Every handler of the wiring table in this process (`npm start`'s direct calls, tests), by
 * handler id, built by the same unit compositions as each Lambda function, on one set of
 * pieces: a tool runs here with exactly the dependencies its own function gives it. The
 * recorder's, the stream's and the fan-out's resolve with nothing. Loaded only once a handler
 * is first handed an event (`handlersLoadedOnUse`): on AWS the API never loads it.
 */
export function inProcessHandlers(units: InProcessUnits): Record<string, CallHandler> {
  const { deployment } = units;
  // The API's call store: a call it made is known here without a read.
  const calls = callsOf(deployment);
  // This process outlives its answers: a call is answered once stored, announced right after.
  const announceLater = lateAnnouncementsOf(deployment).take;
  const recorder = createRecorder(() => recorderDeps(deployment));
  const streamWriter = createStreamWriter(() => streamWriterDeps(deployment));
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
      await units.subscriptions.dispatch(event);
      return undefined;
    },
  };
  for (const tool of units.tools) {
    // What it declares, exactly as in its own function (tool-entry.ts), so a call runs alike
    // whether the API hands it over or the bus delivers it. A tool that declares nothing (a
    // test's, an embedding's) has no function: it runs with this composition's detectors,
    // tools and outbound client.
    const { needs } = tool;
    const deps = needs
      ? declaredToolDeps(needs, deployment, { http: units.http, calls })
      : toolDeps(
          deployment,
          units.http,
          {
            capabilities: units.capabilities,
            fallbacks: units.tools,
            connections: callerConnections,
          },
          calls,
        );
    const runtime = { ...deps, announceLater };
    handlers[toolHandlerId(tool.spec.id)] = createToolHandler(tool, () => runtime);
  }
  const registered = { ...registeredDeps(deployment, units.catalog, calls), announceLater };
  for (const kind of REGISTERED_KINDS) {
    handlers[registeredHandlerId(kind)] = createRegisteredHandler(
      kind,
      DEFINE[kind],
      () => registered,
    );
  }
  return handlers;
}
