import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { ToolsetSpec } from "@toolbus/wire/model/tool";
import type { Dispatcher } from "../app/calls/dispatch";
import { CallService } from "../app/calls/service";
import type { CapabilityDetector } from "../app/capabilities/detectors";
import { CapabilityService } from "../app/capabilities/service";
import { RegisteredToolsets } from "../app/catalog/registered-toolsets";
import { seedCatalog } from "../app/catalog/seed";
import { HealthService } from "../app/health/service";
import type { RunGovernor } from "../app/runs/governor";
import { SearchService } from "../app/search/service";
import { SelectionService } from "../app/selection/service";
import type { SubscriptionService } from "../app/subscriptions/service";
import { busClient } from "../bus-client";
import { checkToolSettings } from "../config";
import { CONNECTION_METHODS } from "../connections/port";
import type { Deployment } from "../deployment";
import { busProbe, type EventPublisher } from "../events/publisher";
import { InProcessMetrics } from "../observability/metrics";
import { createHttpClient, systemLookup } from "../outbound/client";
import { withProbe } from "../outbound/probe";
import type { CapabilityStore, CatalogStore, EventStream, KeyStore } from "../ports";
import { type SubscriptionHandlers, subscriptionHandlers } from "../runtime/subscriptions";
import { stageSecretReader } from "../secrets";
import { cachedCapabilities, cachedCatalog, cachedKeys } from "../store/cached";
import {
  DynamoAuditLog,
  DynamoCapabilityStore,
  DynamoCatalogStore,
  DynamoKeyStore,
  type DynamoStores,
} from "../store/dynamodb";
import { hashKey } from "../store/dynamodb/keys";
import { dynamoProbe } from "../store/dynamodb/probe";
import { PromiseKeepingEventLog } from "../store/dynamodb/promised-appends";
import { type AnyToolDefinition, toolSpecOf } from "../tool-definition";
import { busRules, toolHandlerId } from "../wiring";
import type { ApiDeps } from "./api-deps";
import { busOf } from "./bus";
import { callsOf } from "./calls";
import { channelOf } from "./channel";
import { connectionsOnUse } from "./connections-on-use";
import { mcpFederation } from "./federation";
import { loadedOnUse } from "./loaded-on-use";
import { type CallHandler, handlersLoadedOnUse, inProcessDispatcher } from "./local-dispatch";
import { runningOf, secretOf, storeOf } from "./pieces";
import { inApiFirst, runsInApi } from "./runs-in-api";
import { semanticOnUse } from "./semantic-on-use";

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
 * The API's composition: every application service, built once, over one deployment's
 * stores. On AWS both API entry points run it with a dispatcher that invokes each tool's
 * function; under `npm start` and in tests it also holds every other unit's handler, built
 * by the same unit compositions as their Lambda functions (in-process.ts) on the same pieces.
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
  const store = storeOf(deployment);
  const stores: ToolbusStores = {
    calls: callsOf(deployment),
    events: new PromiseKeepingEventLog(store),
    catalog: cachedCatalog(new DynamoCatalogStore(store)),
    capabilities: cachedCapabilities(new DynamoCapabilityStore(store)),
    keys: cachedKeys(new DynamoKeyStore(store), hashKey),
  };
  const publisher = busOf(deployment);
  const definitions = new Map(catalog.tools.map((tool) => [tool.spec.id, tool]));
  // A typo in a tool's settings stops the start, instead of failing its calls later.
  checkToolSettings(deployment.config, definitions);
  // Capabilities are verified here (a refresh, the seed): the only client that probes.
  const http = withProbe(createHttpClient(deployment.config.outbound), deployment.config.outbound);
  // Registered secrets are read at use, like the tools' own: the deployment's source, then
  // (on AWS) the stage's secrets in SSM.
  const readSecrets = stageSecretReader(secretOf(deployment));
  const capabilities: CapabilityService = new CapabilityService({
    store: stores.capabilities,
    config: deployment.config,
    detectors: catalog.capabilities ?? [],
    secret: secretOf(deployment),
    http,
    registered: () => registered.detectors(),
  });
  // Connected accounts load with their first use: most requests never touch one.
  const connections = connectionsOnUse(deployment, http, CONNECTION_METHODS);
  const registered = new RegisteredToolsets({
    catalog: stores.catalog,
    capabilities,
    config: deployment.config,
    http,
    lookup: systemLookup,
    readSecrets,
    detectors: catalog.capabilities ?? [],
    events: publisher,
    ...(connections ? { connections } : {}),
  });
  // The stage stream loads on first use too: the API reads it only for GET /v1/events.
  let eventStream: Promise<EventStream> | undefined;
  const stream = () => {
    eventStream ??= import("../store/dynamodb/event-stream").then(
      ({ DynamoEventStream }) => new DynamoEventStream(store, deployment.config.stream),
    );
    return eventStream;
  };
  // Subscriptions load on first use: most processes never deliver or manage one.
  const subscriptions = subscriptionHandlers(async () =>
    (await import("./subscriptions")).subscriptionDeps(deployment),
  );
  let subscriptionService: Promise<SubscriptionService> | undefined;
  const rules = busRules([...definitions.keys()]);
  // One handler per rule. Where a dispatcher runs calls elsewhere (the API on AWS), their
  // code (every tool's, the registered kinds' clients, the recorder) is never loaded.
  const handlers: Toolbus["handlers"] = handlersLoadedOnUse(
    rules.map((rule) => rule.handler),
    async () =>
      (await import("./in-process")).inProcessHandlers({
        deployment,
        tools: catalog.tools,
        http,
        capabilities: catalog.capabilities ?? [],
        catalog: stores.catalog,
        subscriptions,
      }),
  );
  // Where calls run in other functions (the API on AWS), the tools that need nothing a
  // function of their own isolates still run here (runs-in-api.ts); their code loads with the
  // first such call.
  const inApi = catalog.tools.filter(runsInApi);
  const dispatcher = options.dispatcher
    ? inApiFirst(
        options.dispatcher,
        handlersLoadedOnUse(
          inApi.map((tool) => toolHandlerId(tool.spec.id)),
          async () => (await import("./in-api")).inApiHandlers(deployment, inApi),
        ),
      )
    : inProcessDispatcher(handlers);
  // Run budgets load with the first call: the API's cold start does not carry them.
  let governor: Promise<RunGovernor> | undefined;
  const runGovernor = () => {
    governor ??= Promise.all([
      import("../app/runs/governor"),
      import("../store/dynamodb/runs"),
    ]).then(
      ([{ RunGovernor }, { DynamoRunStore }]) =>
        new RunGovernor({ runs: new DynamoRunStore(store), config: deployment.config }),
    );
    return governor;
  };
  const selection = new SelectionService({
    config: deployment.config,
    catalog: stores.catalog,
    capabilities: stores.capabilities,
    ...(connections ? { connections } : {}),
  });
  const calls = new CallService({
    selection,
    catalog: stores.catalog,
    calls: stores.calls,
    bus: publisher,
    runLog: stores.events,
    config: deployment.config,
    definitions,
    dispatcher,
    governor: runGovernor,
    running: runningOf(deployment),
    ...(deployment.log ? { log: deployment.log } : {}),
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
      selection,
      search: new SearchService({
        selection,
        // Administrators asking why are also told what selection left out.
        access: deployment.config,
        synonyms: deployment.config.search?.synonyms,
        // Hybrid ranking where the stage names an embeddings API: loaded with the first search.
        ...(deployment.config.search?.embeddings
          ? { semantic: semanticOnUse(deployment, deployment.config.search.embeddings, http) }
          : {}),
      }),
      events: stores.events,
      keys: stores.keys,
      capabilities: {
        list: () => capabilities.list(),
        refresh: () => capabilities.refresh({ verify: true }),
      },
      registered,
      federation: mcpFederation({ selection, http, readSecrets }),
      // Only /mcp's resource subscriptions use it: loaded with the first.
      mcpSubscriptions: loadedOnUse(
        async () =>
          new (await import("../store/dynamodb/mcp-subscriptions")).DynamoMcpSubscriptions(store),
        ["subscribe", "unsubscribe", "list", "seen"],
      ),
      channel: channelOf(deployment),
      // Only MCP tasks (2025-11-25 tasks/list) use it: loaded with the first task.
      taskIndex: loadedOnUse(
        async () => new (await import("../store/dynamodb/task-index")).DynamoTaskIndex(store),
        ["add", "get", "list"],
      ),
      ...(deployment.metrics instanceof InProcessMetrics ? { metrics: deployment.metrics } : {}),
      audit: new DynamoAuditLog(store),
      ...(connections ? { connections } : {}),
      runs: runGovernor,
      stageEvents: async () => {
        const [{ StageEvents }, events] = await Promise.all([
          import("../app/events/stage-events"),
          stream(),
        ]);
        return new StageEvents(events);
      },
      subscriptions: () => {
        subscriptionService ??= (async () => {
          const [{ SubscriptionService }, dynamoSubscriptions, { deliveryRuleOf }] =
            await Promise.all([
              import("../app/subscriptions/service"),
              import("../store/dynamodb/subscriptions"),
              import("./delivery-rule"),
            ]);
          const rule = deliveryRuleOf(deployment);
          return new SubscriptionService({
            subscriptions: new dynamoSubscriptions.DynamoSubscriptionStore(store),
            deliveries: new dynamoSubscriptions.DynamoDeliveryStore(store),
            events: stores.events,
            stream: await stream(),
            config: deployment.config,
            onChange: subscriptions.invalidate,
            ...(rule ? { rule } : {}),
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
      // Calls run in this process are announced after their answers (in-process.ts).
      await (await import("./late-announcements")).lateAnnouncementsOf(deployment).idle();
    },
    seed: () => seedCatalog(stores.catalog, catalog.toolsets, catalog.tools.map(toolSpecOf)),
    refreshCapabilities: (options) => capabilities.refresh(options),
  };
}
