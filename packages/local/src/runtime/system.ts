import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BusRule } from "@toolbus/core";
import {
  type EventBridgeServer,
  LocalEventBus,
  type LocalEventBusOptions,
  type LocalFunction,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../bus";
import { type DynamoDbLocal, startDynamoDbLocal } from "../dynamodb";
import { applyWiring } from "./wiring";

export interface LocalSystemOptions {
  /** Where local.json and the on-disk database live. */
  stateDir: string;
  /** Keep DynamoDB in memory instead of under stateDir/dynamodb. */
  memory?: boolean;
  stage?: string;
  busPort?: number;
  rules?: readonly BusRule[];
  handlers?: Readonly<Record<string, LocalFunction>>;
  bus?: LocalEventBusOptions;
}

export interface LocalSystem {
  stage: string;
  busName: string;
  dynamodb: DynamoDbLocal;
  bus: LocalEventBus;
  busServer: EventBridgeServer;
  /** The file other processes read to find this system's endpoints. */
  stateFile: string;
  stop(): Promise<void>;
}

/**
 * Toolbus on one machine: DynamoDB Local and the EventBridge-compatible bus, wired from the
 * same rule table as a deployed stage. Endpoints go to `<stateDir>/local.json` so the CLI,
 * tests and other processes can find them; the file is removed on stop so it never points
 * at a system that is gone.
 */
export async function startLocalSystem(options: LocalSystemOptions): Promise<LocalSystem> {
  const stage = options.stage ?? "local";
  const busName = `toolbus-${stage}`;
  await mkdir(options.stateDir, { recursive: true });
  const dynamodb = await startDynamoDbLocal(
    options.memory ? {} : { dbPath: join(options.stateDir, "dynamodb") },
  );
  const bus = new LocalEventBus(options.bus);
  let busServer: EventBridgeServer;
  try {
    busServer = await startEventBridgeServer(
      bus,
      options.busPort === undefined ? {} : { port: options.busPort },
    );
    const client = localEventBridgeClient({ bus });
    await applyWiring({
      bus,
      client,
      busName,
      rules: options.rules ?? [],
      handlers: options.handlers ?? {},
    });
    client.destroy();
  } catch (error) {
    bus.close();
    await dynamodb.stop();
    throw error;
  }
  const stateFile = join(options.stateDir, "local.json");
  const endpoints = {
    dynamodb: dynamodb.endpoint,
    eventbridge: busServer.endpoint,
    stage,
    busName,
  };
  await writeFile(stateFile, `${JSON.stringify(endpoints, null, 2)}\n`);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await rm(stateFile, { force: true });
      bus.close();
      await Promise.allSettled([busServer.close(), dynamodb.stop()]);
    })();
    return stopping;
  };
  return { stage, busName, dynamodb, bus, busServer, stateFile, stop };
}
