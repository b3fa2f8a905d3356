import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { z } from "zod";
import { loadStageConfig, type StageConfig } from "./config";
import { ValidationError } from "./errors";
import type { SecretSource } from "./outbound/types";
import { SDK_CLIENT_OPTIONS } from "./sdk-options";
import { boundSecretNames, loadSecrets } from "./secrets";

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
}

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

let cached: Deployment | undefined;

/**
 * The deployment a Lambda function (or `npm start`) runs in, read once from the environment.
 * Clients take region, credentials and endpoints from the environment too
 * (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_EVENTBRIDGE locally), which is the only
 * thing that differs between AWS and one machine.
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Deployment {
  if (cached) return cached;
  const secret: SecretSource = (name) => env[name] || functionSecrets(name);
  const parsed = environment.safeParse({ ...env, TOOLBUS_ADMIN_KEY: secret("TOOLBUS_ADMIN_KEY") });
  if (!parsed.success) {
    throw new ValidationError("The function's environment is incomplete.", {
      details: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
    });
  }
  cached = {
    config: loadStageConfig(env),
    tableName: parsed.data.TOOLBUS_TABLE,
    busName: parsed.data.TOOLBUS_BUS,
    ...(parsed.data.TOOLBUS_ADMIN_KEY ? { adminKey: parsed.data.TOOLBUS_ADMIN_KEY } : {}),
    // Not for DynamoDB: its document client refuses cacheMiddleware.
    dynamodb: new DynamoDBClient({}),
    eventBridge: new EventBridgeClient(SDK_CLIENT_OPTIONS),
    // Environment first, read at use (a local change is seen without a restart); then the
    // secrets SST bound to this function.
    secret,
  };
  return cached;
}
