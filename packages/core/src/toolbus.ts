import type { ApiDeps } from "./api/deps";
import {
  type CallHandler,
  type Dispatcher,
  dispatchFailureReporter,
  handlersLoadedOnUse,
  inProcessDispatcher,
} from "./app/calls/dispatch";
import { loggedWait } from "./app/calls/logged";
import { CallService } from "./app/calls/service";
import type { CapabilityDetector } from "./app/capabilities/detectors";
import { CapabilityService } from "./app/capabilities/service";
import { RegisteredToolsets } from "./app/catalog/registered";
import { seedCatalog } from "./app/catalog/seed";
import { HealthService } from "./app/health/service";
import type { RunGovernor } from "./app/runs/governor";
import { SelectionService } from "./app/selection/service";
import type { SubscriptionService } from "./app/subscriptions/service";
import { busClient } from "./bus-client";
import { checkToolSettings } from "./config";
import type { Deployment } from "./deployment";
import { busProbe, EventPublisher } from "./events/publisher";
import type { CapabilityStatus } from "./model/capability";
import type { ToolsetSpec } from "./model/tool";
import { InProcessMetrics } from "./observability/metrics";
import { systemLookup } from "./outbound/client";
import type { CapabilityStore, CatalogStore, EventStream, KeyStore } from "./ports";
import { toolRuntimeDeps } from "./runtime/deps";
import { type SubscriptionHandlers, subscriptionHandlers } from "./runtime/subscriptions";
import { stageSecretReader } from "./secrets";
import { cachedCapabilities, cachedCatalog, cachedKeys } from "./store/cached";
import { DynamoAuditLog, type DynamoStores, dynamoStores, storeOptions } from "./store/dynamodb";
import { hashKey } from "./store/dynamodb/keys";
import { dynamoProbe } from "./store/dynamodb/probe";
import { type AnyToolDefinition, toolSpecOf } from "./tool-definition";
import { busRules } from "./wiring";

/** The stores as the application uses them: catalog and keys read through short caches. */
export type ToolbusStores = Omit<DynamoStores, "catalog" | "capabilities" | "keys"> & {
  catalog: CatalogStore;
  capabilities: CapabilityStore;
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
  /** The subscriptions dispatcher's entry points in this process (tests drive retries with it). */
  subscriptions: SubscriptionHandlers;
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
    capabilities: cachedCapabilities(dynamo.capabilities),
    keys: cachedKeys(dynamo.keys, hashKey),
  };
  const publisher = new EventPublisher({
    client: busClient(deployment),
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
    ...(deployment.log ? { log: deployment.log } : {}),
  };
  const registeredDeps = { ...runtime, catalog: stores.catalog, readSecrets };
  // The stage stream loads on first use too: the API reads it only for GET /v1/events.
  let eventStream: Promise<EventStream> | undefined;
  const stream = () => {
    eventStream ??= import("./store/dynamodb/event-stream").then(
      ({ DynamoEventStream }) => new DynamoEventStream(store, deployment.config.stream),
    );
    return eventStream;
  };
  // Subscriptions load on first use: most processes never deliver or manage one.
  const subscriptions = subscriptionHandlers(async () =>
    (await import("./runtime/subscription-deps")).subscriptionDeps(deployment),
  );
  let subscriptionService: Promise<SubscriptionService> | undefined;
  const rules = busRules([...definitions.keys()]);
  // One handler per rule. Where a dispatcher runs calls elsewhere (the API on AWS), their
  // code (every tool's, the registered kinds' clients, the recorder) is never loaded.
  const handlers: Toolbus["handlers"] = handlersLoadedOnUse(
    rules.map((rule) => rule.handler),
    async () =>
      (await import("./runtime/in-process")).inProcessHandlers({
        tools: catalog.tools,
        runtime: () => runtime,
        recorder: () => recorderDeps,
        stream: async () => ({ ...recorderDeps, stream: await stream() }),
        registered: () => registeredDeps,
        subscriptions,
      }),
  );
  const dispatcher =
    options.dispatcher ?? inProcessDispatcher(handlers, dispatchFailureReporter(deployment.log));
  // Run budgets load with the first call: the API's cold start does not carry them.
  let governor: Promise<RunGovernor> | undefined;
  const runGovernor = () => {
    governor ??= Promise.all([import("./app/runs/governor"), import("./store/dynamodb/runs")]).then(
      ([{ RunGovernor }, { DynamoRunStore }]) =>
        new RunGovernor({ runs: new DynamoRunStore(store), config: deployment.config }),
    );
    return governor;
  };
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
    governor: runGovernor,
    ...(deployment.log ? { log: deployment.log } : {}),
    // Where this process alone writes the table (the local composition: `npm start`, tests),
    // the recorder runs here too, and a finished call is answered once its events are in its
    // run's log. On AWS the recorder is another function: nothing waits for it.
    ...(deployment.appendLog
      ? {
          logged: loggedWait({
            events: stores.events,
            recent: (runId, callId) => dynamo.calls.recent(runId, callId),
            ...(deployment.log ? { log: deployment.log } : {}),
          }),
        }
      : {}),
  });
  return {
    stores,
    publisher,
    calls,
    handlers,
    rules,
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
      ...(deployment.metrics instanceof InProcessMetrics ? { metrics: deployment.metrics } : {}),
      audit: new DynamoAuditLog(store),
      runs: runGovernor,
      stageEvents: async () => {
        const [{ StageEvents }, events] = await Promise.all([
          import("./app/events/stage-events"),
          stream(),
        ]);
        return new StageEvents(events);
      },
      subscriptions: () => {
        subscriptionService ??= (async () => {
          const [{ SubscriptionService }, dynamoSubscriptions] = await Promise.all([
            import("./app/subscriptions/service"),
            import("./store/dynamodb/subscriptions"),
          ]);
          return new SubscriptionService({
            subscriptions: new dynamoSubscriptions.DynamoSubscriptionStore(store),
            deliveries: new dynamoSubscriptions.DynamoDeliveryStore(store),
            events: stores.events,
            stream: await stream(),
            config: deployment.config,
            onChange: subscriptions.invalidate,
          });
        })();
        return subscriptionService;
      },
      ...(deployment.log ? { log: deployment.log } : {}),
      health: new HealthService([
        dynamoProbe(store),
        busProbe(busClient(deployment), deployment.busName),
      ]),
      // Read per request: on AWS the key is a bound secret, loaded on the function's first event.
      adminKey: () => deployment.adminKey,
    },
    subscriptions,
    settled: async () => {
      await dispatcher.idle?.();
    },
    seed: () => seedCatalog(stores.catalog, catalog.toolsets, catalog.tools.map(toolSpecOf)),
    refreshCapabilities: (options) => capabilities.refresh(options),
  };
}
