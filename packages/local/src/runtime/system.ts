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
import { previousRun } from "./state-file";
import { applySchedules, applyWiring } from "./wiring";

export interface LocalSystemOptions {
  /** Where local.json and the on-disk database live. */
  stateDir: string;
  /** Keep DynamoDB in memory instead of under stateDir/dynamodb. */
  memory?: boolean;
  stage?: string;
  busPort?: number;
  bus?: LocalEventBusOptions;
  /**
   * Runs after DynamoDB Local came back from an exit nobody asked for (it is started again on
   * the same port). In memory its tables are gone: this is where they are made again.
   */
  onDynamoDbRestart?: (lostData: boolean) => Promise<void>;
  /** Where restarts and stale files are reported (default: the console). */
  log?: (line: string) => void;
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
  const log = options.log ?? ((line: string) => console.error(line));
  await mkdir(options.stateDir, { recursive: true });
  const previous = await previousRun(stateFile);
  if (previous.kind === "running") {
    throw new Error(
      `Toolbus is already running with ${options.stateDir} (pid ${previous.pid}${previous.api ? `, API ${previous.api}` : ""}): two instances cannot share one database. Stop it, or pass another --state-dir.`,
    );
  }
  if (previous.kind === "stale") {
    log(
      `Replacing ${stateFile}: the run that wrote it${previous.pid ? ` (pid ${previous.pid})` : ""} ended without removing it.`,
    );
    await rm(stateFile, { force: true });
  }
  const lostData = options.memory === true;
  const dynamodb = await startDynamoDbLocal({
    ...(options.memory ? {} : { dbPath: join(options.stateDir, "dynamodb") }),
    keepAlive: {
      onExit: ({ code, signal, attempt, restartInMs }) =>
        log(
          `DynamoDB Local ${attempt === 1 ? `exited (${signal ?? `code ${code}`})` : "did not start again"}; starting it in ${restartInMs} ms. Until then every request that needs it answers 503.`,
        ),
      onRestartFailed: (error) =>
        log(`DynamoDB Local: ${error instanceof Error ? error.message.split("\n")[0] : error}`),
      onRestart: async ({ pid }) => {
        await options.onDynamoDbRestart?.(lostData);
        log(
          lostData
            ? `DynamoDB Local is back (pid ${pid}), in memory: every table and item it held was lost (calls, run logs, API keys made since the start). The table and the catalog were made again.`
            : `DynamoDB Local is back (pid ${pid}); its data on disk is intact.`,
        );
      },
    },
  });
  // On disk, accepted events outlive the process as the data does; in memory neither does.
  // So do rules and targets that users made, and dead letters until they are redriven.
  const bus = new LocalEventBus({
    ...(options.memory
      ? {}
      : {
          journalFile: join(options.stateDir, "bus-journal.jsonl"),
          rulesFile: join(options.stateDir, "bus-rules.json"),
          deadLettersFile: join(options.stateDir, "bus-dead-letters.json"),
        }),
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
        // Lets the next start (and the CLI) tell a live instance from a file left by a kill.
        pid: process.pid,
        // What the bus accepts signatures from (DynamoDB Local takes any): this run's only.
        credentials: busServer.credentials,
      };
      await writeFile(stateFile, `${JSON.stringify(endpoints, null, 2)}\n`, { mode: 0o600 });
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
