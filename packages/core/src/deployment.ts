import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import * as z from "zod";
import { loadStageConfig, type StageConfig } from "./config";
import { ValidationError, zodIssues } from "./errors";
import type { SecretSource } from "./outbound/types";
import { DYNAMODB_CLIENT_OPTIONS, SDK_CLIENT_OPTIONS } from "./sdk-options";
import { boundSecretNames, firstSecret, loadSecrets } from "./secrets";

/** Where a stage's state lives and how to reach it: the same shape on AWS and locally. */
export interface Deployment {
  config: StageConfig;
  tableName: string;
  busName: string;
  adminKey?: string;
  dynamodb: DynamoDBClient;
  eventBridge: EventBridgeClient;
  /** Secret values by name; environment variables unless given. */
  secret?: SecretSource;
  /**
   * How long unconditional puts wait to share a batch (ms). Only where one long-lived process
   * serves many calls at once (`npm start`); a Lambda function serves one event at a time.
   */
  writeLingerMs?: number;
  /**
   * How long after the moment it describes an event becomes readable in a run's log: events
   * are recorded out of order, and a reader must not pass a place an event will still fill.
   * It covers the usual delay from an event's time to its log entry (the bus, the recorder).
   */
  eventSettleMs?: number;
}

/** On AWS: EventBridge's delivery to the recorder function takes up to seconds. */
const AWS_EVENT_SETTLE_MS = 5_000;

/** What only the local runtime sets: its own transports and batching. */
export type LocalDeploymentOptions = Pick<Deployment, "writeLingerMs" | "eventSettleMs"> & {
  /** The bus in this process, reached without a socket; the HTTP endpoint stays for others. */
  eventBridge?: EventBridgeClient;
};

const environment = z.object({
  TOOLBUS_TABLE: z.string().min(3).max(255),
  TOOLBUS_BUS: z.string().min(1).max(256),
  TOOLBUS_ADMIN_KEY: z
    .string()
    .min(24, "TOOLBUS_ADMIN_KEY must be at least 24 characters")
    .optional(),
});

/**
 * This function's secrets: environment variables, or on AWS the SST-bound secrets, fetched
 * from SSM here, before any handler module's body runs (ESM finishes this await first), once
 * per cold start. Locally nothing is bound and this resolves at once without loading SSM.
 */
export const functionSecrets: SecretSource = await loadSecrets(boundSecretNames(process.env));

/** Environment variables first, read at use (a local change is seen without a restart); then the secrets SST bound to this function. */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env): SecretSource {
  return firstSecret((name) => env[name], functionSecrets);
}

let cached: Deployment | undefined;

/**
 * The deployment a Lambda function (or `npm start`) runs in, read once from the environment.
 * Clients take region, credentials and endpoints from the environment too
 * (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_EVENTBRIDGE locally), which is the only
 * thing that differs between AWS and one machine. `npm start` reads it first, with `local`:
 * every handler it loads then shares that deployment. The process environment's deployment
 * is built once per process; any other `env` is read afresh on every call.
 */
export function deploymentFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  local: LocalDeploymentOptions = {},
): Deployment {
  if (env !== process.env) return readDeployment(env, local);
  if (cached) {
    if (Object.keys(local).length > 0) {
      throw new Error("deploymentFromEnv: local options must come with the first call.");
    }
    return cached;
  }
  cached = readDeployment(env, local);
  return cached;
}

function readDeployment(env: NodeJS.ProcessEnv, local: LocalDeploymentOptions): Deployment {
  const secret = environmentSecrets(env);
  const parsed = environment.safeParse({ ...env, TOOLBUS_ADMIN_KEY: secret("TOOLBUS_ADMIN_KEY") });
  if (!parsed.success) {
    throw new ValidationError("The function's environment is incomplete.", {
      details: zodIssues(parsed.error.issues, "(environment)"),
    });
  }
  return {
    config: loadStageConfig(env),
    tableName: parsed.data.TOOLBUS_TABLE,
    busName: parsed.data.TOOLBUS_BUS,
    ...(parsed.data.TOOLBUS_ADMIN_KEY ? { adminKey: parsed.data.TOOLBUS_ADMIN_KEY } : {}),
    // Not for DynamoDB: its document client refuses cacheMiddleware.
    dynamodb: new DynamoDBClient(DYNAMODB_CLIENT_OPTIONS),
    eventBridge: local.eventBridge ?? new EventBridgeClient(SDK_CLIENT_OPTIONS),
    ...(local.writeLingerMs ? { writeLingerMs: local.writeLingerMs } : {}),
    eventSettleMs: local.eventSettleMs ?? (env.AWS_LAMBDA_FUNCTION_NAME ? AWS_EVENT_SETTLE_MS : 0),
    secret,
  };
}
