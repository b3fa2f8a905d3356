import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import {
  type AnyToolDefinition,
  type CapabilityDetector,
  createToolbus,
  type Deployment,
  type Dispatcher,
  ensureTable,
  parseStageConfig,
  SUBSCRIPTIONS_RULE,
  type Toolbus,
} from "@toolbus/core";
import { deliveryRuleOf } from "@toolbus/core/compose/delivery-rule";
import type { Logger, MetricsSink } from "@toolbus/core/observability";
import type { SecretSource } from "@toolbus/core/outbound";
import { appendAsSoleWriter } from "@toolbus/core/store/dynamodb";
import { createApi } from "@toolbus/http";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import type { ToolsetSpec } from "@toolbus/wire/model";
import type { LocalEventBus } from "../bus";
import { applyWiring } from "./wiring";

export interface ComposeOptions {
  dynamodb: DynamoDBClient;
  eventBridge: EventBridgeClient;
  bus: LocalEventBus;
  tableName: string;
  busName: string;
  adminKey: string;
  config?: unknown;
  tools?: readonly AnyToolDefinition[];
  toolsets?: readonly ToolsetSpec[];
  capabilities?: readonly CapabilityDetector[];
  /** Secret values by name; the process environment unless given. */
  secret?: SecretSource;
  /** Where finished calls are counted (GET /v1/metrics); none unless given. */
  metrics?: MetricsSink;
  /** Where the steps of every call are logged; nothing unless given. */
  log?: Logger;
  followIntervalMs?: number;
  /** Runs calls a caller waits for; default: the handlers in this process. */
  dispatcher?: Dispatcher;
}

/**
 * The whole system in this process, for tests and benchmarks: the table, the wiring table's
 * rules with the same handler factories the Lambda entry points use, the seeded catalog and
 * the API app. `npm start` composes the same parts from the functions/ entry points.
 */
export async function composeLocalToolbus(
  options: ComposeOptions,
): Promise<{ toolbus: Toolbus; app: ReturnType<typeof createApi> }> {
  await ensureTable(options.dynamodb, options.tableName);
  const deployment: Deployment = {
    config: parseStageConfig(options.config ?? {}),
    tableName: options.tableName,
    busName: options.busName,
    // Switched as on AWS: on only while a subscription exists.
    subscriptionsRule: SUBSCRIPTIONS_RULE,
    adminKey: options.adminKey,
    dynamodb: options.dynamodb,
    eventBridge: options.eventBridge,
    ...(options.secret ? { secret: options.secret } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
    // One process runs everything, as under npm start.
    appendLog: appendAsSoleWriter,
  };
  const toolbus = createToolbus(
    deployment,
    {
      tools: options.tools ?? builtinTools,
      toolsets: options.toolsets ?? builtinToolsets,
      capabilities: options.capabilities ?? builtinCapabilities,
    },
    options.dispatcher ? { dispatcher: options.dispatcher } : {},
  );
  await applyWiring({
    bus: options.bus,
    client: options.eventBridge,
    busName: options.busName,
    rules: toolbus.rules,
    handlers: toolbus.handlers,
  });
  // Wiring puts every rule enabled; the subscriptions rule is then set as the first sweep
  // would set it, so a table without subscriptions starts with it off.
  await deliveryRuleOf(deployment)?.reconcile();
  await toolbus.seed();
  await toolbus.refreshCapabilities();
  const app = createApi({
    ...toolbus.apiDeps,
    ...(options.followIntervalMs ? { followIntervalMs: options.followIntervalMs } : {}),
  });
  return { toolbus, app };
}
