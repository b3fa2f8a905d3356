import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { z } from "zod";
import { loadStageConfig, type StageConfig } from "./config";
import { ValidationError } from "./errors";
import type { SecretSource } from "./outbound/types";

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

let cached: Deployment | undefined;

/**
 * The deployment a Lambda function (or `npm start`) runs in, read once from the environment.
 * Clients take region, credentials and endpoints from the environment too
 * (AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_EVENTBRIDGE locally), which is the only
 * thing that differs between AWS and one machine.
 */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): Deployment {
  if (cached) return cached;
  const parsed = environment.safeParse(env);
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
    dynamodb: new DynamoDBClient({}),
    eventBridge: new EventBridgeClient({}),
    // Read at use, not copied: a rotated secret reaches a warm function on its next call.
    secret: (name) => env[name] || undefined,
  };
  return cached;
}
