import { randomBytes, randomUUID } from "node:crypto";
import { DeleteTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import type { AnyToolDefinition, CapabilityDetector, Dispatcher, Toolbus } from "@toolbus/core";
import type { Logger, MetricsSink } from "@toolbus/core/observability";
import type { createApi } from "@toolbus/http";
import { composeLocalToolbus } from "@toolbus/local";
import {
  LocalEventBus,
  type LocalEventBusOptions,
  localEventBridgeClient,
} from "@toolbus/local/bus";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { testDynamoDbClient } from "./dynamodb";

export interface TestToolbus {
  toolbus: Toolbus;
  app: ReturnType<typeof createApi>;
  bus: LocalEventBus;
  /** The deployment's EventBridge client (in-process transport): what publishes the events. */
  eventBridge: EventBridgeClient;
  /** The deployment's DynamoDB client: what every store of this Toolbus sends through. */
  dynamodb: DynamoDBClient;
  tableName: string;
  busName: string;
  adminKey: string;
  /** A fresh run id, so tests sharing a table never see each other's events. */
  runId(): string;
  /** `app.request` with the admin key (or the given key) and JSON headers. */
  request(
    path: string,
    init?: RequestInit & { key?: string | null; json?: unknown },
  ): Promise<Response>;
  /** Resolves once every call dispatched in-process is announced and every delivery landed. */
  settle(): Promise<void>;
  /** A run's event log once every delivery so far has landed (first page, up to 100). */
  events<T = { eventKey: string; detailType: string; detail: Record<string, unknown> }>(
    runId: string,
  ): Promise<T[]>;
  stop(): Promise<void>;
}

export interface TestToolbusOptions {
  config?: unknown;
  tools?: readonly AnyToolDefinition[];
  toolsets?: readonly ToolsetSpec[];
  capabilities?: readonly CapabilityDetector[];
  /** Secret values by name, instead of the environment. */
  secrets?: Record<string, string>;
  bus?: LocalEventBusOptions;
  dispatcher?: Dispatcher;
  /** Count finished calls here, as `npm start` does (GET /v1/metrics). */
  metrics?: MetricsSink;
  /** Log every call's steps here. */
  log?: Logger;
}

/**
 * The real system in one process: its own DynamoDB Local table, the local bus with the
 * wiring table's rules, the same handlers and the Hono app. No part is faked.
 */
export async function startTestToolbus(options: TestToolbusOptions = {}): Promise<TestToolbus> {
  const dynamodb = testDynamoDbClient();
  const tableName = `toolbus-test-${randomUUID().slice(0, 8)}`;
  // Quick retries, and few: a target a test breaks on purpose is dead-lettered in moments.
  const bus = new LocalEventBus({
    delivery: { baseDelayMs: 5, maxDelayMs: 50 },
    defaultMaxRetries: 2,
    ...options.bus,
  });
  const eventBridge = localEventBridgeClient({ bus });
  const busName = "toolbus-test";
  const adminKey = `test-admin-${randomBytes(18).toString("base64url")}`;
  const { toolbus, app } = await composeLocalToolbus({
    dynamodb,
    eventBridge,
    bus,
    tableName,
    busName,
    adminKey,
    ...(options.config !== undefined ? { config: options.config } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.toolsets ? { toolsets: options.toolsets } : {}),
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    secret: (name) => options.secrets?.[name],
    followIntervalMs: 20,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.log ? { log: options.log } : {}),
  });

  return {
    toolbus,
    app,
    bus,
    eventBridge,
    dynamodb,
    tableName,
    busName,
    adminKey,
    runId: () => `run-${randomUUID()}`,
    request(path, init = {}) {
      const { key = adminKey, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== null) headers.set("authorization", `Bearer ${key}`);
      if (json !== undefined) headers.set("content-type", "application/json");
      return Promise.resolve(
        app.request(path, {
          ...rest,
          headers,
          ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
        }),
      );
    },
    async settle() {
      await toolbus.settled();
      await bus.drain();
    },
    async events<T>(runId: string): Promise<T[]> {
      await toolbus.settled();
      await bus.drain();
      const response = await app.request(`/v1/runs/${runId}/events`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      if (response.status !== 200) throw new Error(`reading events answered ${response.status}`);
      return ((await response.json()) as { events: T[] }).events;
    },
    async stop() {
      await toolbus.settled();
      await bus.drain();
      bus.close();
      eventBridge.destroy();
      await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
      dynamodb.destroy();
    },
  };
}
