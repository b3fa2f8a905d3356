import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import type { BusRule, ScheduledJob } from "@toolbus/core";
import {
  type EventBridgeServer,
  LocalEventBus,
  type LocalEventBusOptions,
  type LocalFunction,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../bus";
import { type DynamoDbLocal, startDynamoDbLocal } from "../dynamodb";
import { applySchedules, applyWiring } from "./wiring";

export interface LocalSystemOptions {
  /** Where local.json and the on-disk database live. */
  stateDir: string;
  /** Keep DynamoDB in memory instead of under stateDir/dynamodb. */
  memory?: boolean;
  stage?: string;
  busPort?: number;
  bus?: LocalEventBusOptions;
}

export interface LocalSystem {
  stage: string;
  busName: string;
  dynamodb: DynamoDbLocal;
  bus: LocalEventBus;
  busServer: EventBridgeServer;
  /** An EventBridge SDK client for this bus, in this process (no socket); destroyed on stop. */
  eventBridge: EventBridgeClient;
  /** The file other processes read to find this system's endpoints. */
  stateFile: string;
  /** Registers the wiring table's rules and their handlers on the stage's bus. */
  wire(rules: readonly BusRule[], handlers: Readonly<Record<string, LocalFunction>>): Promise<void>;
  /** Registers timed jobs (the sweeper) as rate() rules on the local bus. */
  schedule(
    jobs: readonly ScheduledJob[],
    handlers: Readonly<Record<string, LocalFunction>>,
  ): Promise<void>;
  /** Writes local.json with the endpoints (and any extra ones, such as the API's). */
  writeStateFile(extra?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The infrastructure of Toolbus on one machine: DynamoDB Local and the EventBridge-compatible
 * bus with the stage's bus created. local.json is removed on stop so it never points at a
 * system that is gone.
 */
export async function startLocalSystem(options: LocalSystemOptions): Promise<LocalSystem> {
  const stage = options.stage ?? "local";
  const busName = `toolbus-${stage}`;
  const stateFile = join(options.stateDir, "local.json");
  await mkdir(options.stateDir, { recursive: true });
  const dynamodb = await startDynamoDbLocal(
    options.memory ? {} : { dbPath: join(options.stateDir, "dynamodb") },
  );
  // On disk, accepted events outlive the process as the data does; in memory neither does.
  const bus = new LocalEventBus({
    ...(options.memory ? {} : { journalFile: join(options.stateDir, "bus-journal.jsonl") }),
    ...options.bus,
  });
  const client = localEventBridgeClient({ bus });
  let busServer: EventBridgeServer;
  try {
    busServer = await startEventBridgeServer(
      bus,
      options.busPort === undefined ? {} : { port: options.busPort },
    );
  } catch (error) {
    bus.close();
    await dynamodb.stop();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    stage,
    busName,
    dynamodb,
    bus,
    busServer,
    eventBridge: client,
    stateFile,
    wire: (rules, handlers) => applyWiring({ bus, client, busName, rules, handlers }),
    schedule: (jobs, handlers) => applySchedules({ bus, client, jobs, handlers }),
    async writeStateFile(extra = {}) {
      const endpoints = {
        dynamodb: dynamodb.endpoint,
        eventbridge: busServer.endpoint,
        ...extra,
        stage,
        busName,
      };
      await writeFile(stateFile, `${JSON.stringify(endpoints, null, 2)}\n`);
    },
    stop() {
      stopping ??= (async () => {
        await rm(stateFile, { force: true });
        await bus.drain();
        bus.close();
        client.destroy();
        await Promise.allSettled([busServer.close(), dynamodb.stop()]);
      })();
      return stopping;
    },
  };
}
