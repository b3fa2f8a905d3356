import type { ApiDeps } from "./api/deps";
import { type CallHandler, type Dispatcher, inProcessDispatcher } from "./app/calls/dispatch";
import { CallService } from "./app/calls/service";
import type { CapabilityDetector } from "./app/capabilities/detectors";
import { CapabilityService } from "./app/capabilities/service";
import { RegisteredToolsets } from "./app/catalog/registered";
import { seedCatalog } from "./app/catalog/seed";
import { HealthService } from "./app/health/service";
import { SelectionService } from "./app/selection/service";
import { checkToolSettings } from "./config";
import type { Deployment } from "./deployment";
import { busProbe, EventPublisher } from "./events/publisher";
import type { CapabilityStatus } from "./model/capability";
import type { ToolsetSpec } from "./model/tool";
import { systemLookup } from "./outbound/client";
import type { CatalogStore, KeyStore } from "./ports";
import { createRegisteredHandler, type RegisteredDefinition } from "./registered/handler";
import { httpToolDefinition } from "./registered/http-tool";
import { mcpToolDefinition } from "./registered/mcp-tool";
import { toolRuntimeDeps } from "./runtime/deps";
import { createRecorder } from "./runtime/recorder";
import { createToolHandler } from "./runtime/tool-handler";
import { stageSecretReader } from "./secrets";
import { cachedCatalog, cachedKeys } from "./store/cached";
import { type DynamoStores, dynamoStores, storeOptions } from "./store/dynamodb";
import { hashKey } from "./store/dynamodb/keys";
import { dynamoProbe } from "./store/dynamodb/probe";
import { type AnyToolDefinition, toolSpecOf } from "./tool-definition";

/** Each registered kind's runnable tool: this process runs every kind. */
const DEFINE: Record<(typeof REGISTERED_KINDS)[number], RegisteredDefinition> = {
  http: httpToolDefinition,
  mcp: mcpToolDefinition,
};

import {
  busRules,
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  registeredHandlerId,
  toolHandlerId,
} from "./wiring";

/** The stores as the application uses them: catalog and keys read through short caches. */
export type ToolbusStores = Omit<DynamoStores, "catalog" | "keys"> & {
  catalog: CatalogStore;
  keys: KeyStore;
};

export interface Toolbus {
  stores: ToolbusStores;
  publisher: EventPublisher;
  calls: CallService;
  /** Bus handlers by the wiring table's handler ids (the recorder's resolves with nothing). */
  handlers: Record<string, CallHandler>;
  rules: ReturnType<typeof busRules>;
  apiDeps: ApiDeps;
  /** Resolves once every call dispatched directly in this process has been announced. */
  settled(): Promise<void>;
  /** Writes the built-in catalog, keeping an administrator's enable / disable choices. */
  seed(): Promise<{ written: string[] }>;
  /** Detects (and with `verify`, checks live) every capability and stores the statuses. */
  refreshCapabilities(options?: { verify?: boolean }): Promise<CapabilityStatus[]>;
}

/**
 * The whole system composed from one deployment: used by `npm start` and by tests. Lambda
 * entry points compose only the part they run (see runtime/deps.ts).
 */
export function createToolbus(
  deployment: Deployment,
  catalog: {
    tools: readonly AnyToolDefinition[];
    toolsets: readonly ToolsetSpec[];
    capabilities?: readonly CapabilityDetector[];
  },
  options: {
    /**
     * Runs calls a caller waits for. Default: this process's own handlers. On AWS the API
     * passes one that invokes each tool's function, so tools run with their own secrets.
     */
    dispatcher?: Dispatcher;
  } = {},
): Toolbus {
  const store = storeOptions(deployment);
  const dynamo = dynamoStores(store);
  const stores: ToolbusStores = {
    ...dynamo,
    catalog: cachedCatalog(dynamo.catalog),
    keys: cachedKeys(dynamo.keys, hashKey),
  };
  const publisher = new EventPublisher({
    client: deployment.eventBridge,
    busName: deployment.busName,
  });
  const definitions = new Map(catalog.tools.map((tool) => [tool.spec.id, tool]));
  // A typo in a tool's settings stops the start, instead of failing its calls later.
  checkToolSettings(deployment.config, definitions);
  const runtime = {
    ...toolRuntimeDeps(deployment, {
      capabilities: catalog.capabilities ?? [],
      fallbacks: catalog.tools,
    }),
    calls: stores.calls,
    publisher,
  };
  // Registered secrets are read at use, like the tools' own: the deployment's source, then
  // (on AWS) the stage's secrets in SSM.
  const readSecrets = stageSecretReader(runtime.secret);
  const capabilities: CapabilityService = new CapabilityService({
    store: stores.capabilities,
    config: deployment.config,
    detectors: catalog.capabilities ?? [],
    secret: runtime.secret,
    http: runtime.http,
    registered: () => registered.detectors(),
  });
  const registered = new RegisteredToolsets({
    catalog: stores.catalog,
    capabilities,
    config: deployment.config,
    http: runtime.http,
    lookup: systemLookup,
    readSecrets,
    detectors: catalog.capabilities ?? [],
  });
  const recorderDeps = {
    ...stores,
    recentCall: (runId: string, callId: string) => dynamo.calls.recent(runId, callId),
  };
  const recorder = createRecorder(() => recorderDeps);
  const handlers: Toolbus["handlers"] = {
    [RECORDER_HANDLER]: async (event) => {
      await recorder(event);
      return undefined;
    },
  };
  for (const tool of catalog.tools) {
    handlers[toolHandlerId(tool.spec.id)] = createToolHandler(tool, () => runtime);
  }
  for (const kind of REGISTERED_KINDS) {
    handlers[registeredHandlerId(kind)] = createRegisteredHandler(kind, DEFINE[kind], () => ({
      ...runtime,
      catalog: stores.catalog,
      readSecrets,
    }));
  }
  const dispatcher = options.dispatcher ?? inProcessDispatcher(handlers);
  const calls = new CallService({
    selection: new SelectionService({
      config: deployment.config,
      catalog: stores.catalog,
      capabilities: stores.capabilities,
    }),
    catalog: stores.catalog,
    calls: stores.calls,
    publisher,
    config: deployment.config,
    definitions,
    dispatcher,
  });
  return {
    stores,
    publisher,
    calls,
    handlers,
    rules: busRules([...definitions.keys()]),
    apiDeps: {
      config: deployment.config,
      catalog: stores.catalog,
      calls,
      events: stores.events,
      keys: stores.keys,
      capabilities: {
        list: () => capabilities.list(),
        refresh: () => capabilities.refresh({ verify: true }),
      },
      registered,
      health: new HealthService([
        dynamoProbe(store),
        busProbe(deployment.eventBridge, deployment.busName),
      ]),
      // Read per request: on AWS the key is a bound secret, loaded on the function's first event.
      adminKey: () => deployment.adminKey,
    },
    settled: async () => {
      await dispatcher.idle?.();
    },
    seed: () => seedCatalog(stores.catalog, catalog.toolsets, catalog.tools.map(toolSpecOf)),
    refreshCapabilities: (options) => capabilities.refresh(options),
  };
}
