/**
 * Toolbus core. Layers, inside out: `model` (what is stored and sent, as zod schemas), `app`
 * (the application: calls, selection, catalog, capabilities; every rule lives once here),
 * `ports` (what the application needs of storage), adapters (`store/dynamodb`, `api` for
 * HTTP, `mcp`, `runtime` for bus handlers). `toolbus.ts` composes them for one process.
 */

// The error classes are the wire contract's; core raises them.
export * from "@toolbus/wire/errors";
export { REGISTERED_SECRET_PREFIX } from "@toolbus/wire/model/registered-secret";
export { roleAtLeast } from "./app/access";
export { type Dispatcher, DispatchNotStartedError } from "./app/calls/dispatch";
export { type ScheduledEnvelope, scheduledEnvelope } from "./app/calls/lifecycle";
export { type CallOutcome, CallService, type CallServiceDeps } from "./app/calls/service";
export { isFinished, statusUrl } from "./app/calls/status";
export {
  type CapabilityCheck,
  type CapabilityContext,
  type CapabilityDetector,
  checkCapabilities,
  missingCapability,
  networkCapability,
  secretCapability,
} from "./app/capabilities/detectors";
export { checkToolRegistration, validateCatalog } from "./app/catalog/consistency";
export { seedCatalog } from "./app/catalog/seed";
export type { PromptTool, RenderedPrompt } from "./app/selection/prompt";
export { type CallHandler, inProcessDispatcher } from "./compose/local-dispatch";
export { createToolbus, type Toolbus, type ToolbusStores } from "./compose/toolbus";
export {
  forStage,
  loadStageConfig,
  parseStageConfig,
  parseStageConfigFrom,
  readStageConfigSource,
  type StageConfig,
  type StageConfigSource,
} from "./config";
export { type Deployment, deploymentFromEnv } from "./deployment";
export { EventPublisher, type OutgoingEvent } from "./events/publisher";
export { createRecorder } from "./runtime/recorder";
export { createSweeper, type SweeperDeps } from "./runtime/sweeper";
export { createToolHandler, type ToolRuntimeDeps } from "./runtime/tool-handler";
export { SDK_CLIENT_OPTIONS } from "./sdk-options";
export { STORE_CACHE_TTL_MS } from "./store/cached";
export { ensureTable } from "./store/ensure-table";
export { createTableInput, TABLE } from "./store/table";
export {
  type AnyToolDefinition,
  defineTool,
  type ToolContext,
  type ToolDefinition,
  ToolFailure,
  type ToolOutcome,
  toolSpecOf,
} from "./tool-definition";
export { Sha256 } from "./util/sha256";
export {
  type BusRule,
  busRules,
  DELIVERIES_HANDLER,
  DETAIL_TYPES,
  type DetailType,
  EVENT_SOURCE,
  fedByBus,
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  registeredHandlerId,
  SCHEDULED_JOBS,
  type ScheduledJob,
  STREAM_HANDLER,
  SUBSCRIPTIONS_HANDLER,
  SUBSCRIPTIONS_RULE,
  SWEEPER_HANDLER,
  toolHandlerId,
} from "./wiring";
