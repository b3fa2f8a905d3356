import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import * as z from "zod";
import { loadStageConfig, type StageConfig } from "./config";
import type { DataKeys } from "./connections/envelope";
import { ValidationError, zodIssues } from "./errors";
import { createLogger, LOG_LEVELS, type Logger } from "./observability/log";
import { emfMetrics, type MetricsSink } from "./observability/metrics";
import type { SecretSource } from "./outbound/types";
import { DYNAMODB_CLIENT_OPTIONS } from "./sdk-options";
import { boundSecretNames, firstSecret, loadSecrets } from "./secrets";
import type { LogAppend } from "./store/dynamodb/client";

/** Where a stage's state lives and how to reach it: the same shape on AWS and locally. */
export interface Deployment {
  config: StageConfig;
  tableName: string;
  busName: string;
  /**
   * The name of the bus's subscriptions rule (wiring.ts), which the API and the sweeper switch
   * on and off as subscriptions come and go. Absent, nothing touches the rule.
   */
  subscriptionsRule?: string;
  /** The bootstrap admin key; read at use, since a bound secret is loaded on the first event. */
  adminKey?: string;
  dynamodb: DynamoDBClient;
  /**
   * The bus's client where it is not the default one (`npm start` and tests pass theirs);
   * otherwise `busClient` makes it on first use, so a function that never publishes (the
   * recorder) carries no EventBridge client.
   */
  eventBridge?: EventBridgeClient;
  /** Secret values by name; environment variables unless given. */
  secret?: SecretSource;
  /** How run logs are appended where one process writes the table: DynamoStoreOptions.appendLog. */
  appendLog?: LogAppend;
  /**
   * Structured log lines: JSON on stdout in Lambda, readable under `npm start`. Set by
   * `deploymentFromEnv`; a deployment built by hand (tests) reports nothing.
   */
  log?: Logger;
  /** Call metrics: EMF lines in Lambda, counters in the process under `npm start`. */
  metrics?: MetricsSink;
  /** The key connection tokens are sealed with; by default from the environment (compose/connections.ts). */
  connectionKeys?: DataKeys;
}

/** What only the local runtime sets: its own transports, batching and log output. */
export type LocalDeploymentOptions = Partial<Pick<Deployment, "appendLog" | "log" | "metrics">> & {
  /** The bus in this process, reached without a socket; the HTTP endpoint stays for others. */
  eventBridge?: EventBridgeClient;
};

const environment = z.object({
  TOOLBUS_TABLE: z.string().min(3).max(255),
  TOOLBUS_BUS: z.string().min(1).max(256),
  /** An EventBridge rule name. */
  TOOLBUS_SUBSCRIPTIONS_RULE: z
    .string()
    .regex(/^[.\-_A-Za-z0-9]{1,64}$/)
    .optional(),
  TOOLBUS_LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
});

const adminKeySchema = z
  .string()
  .min(24, "TOOLBUS_ADMIN_KEY must be at least 24 characters")
  .optional();

/**
 * The secrets SST bound to this function, once `loadFunctionSecrets` has fetched them; none
 * before. Nothing is read at import: a cold start reaches SSM on its first event, never while
 * Lambda initializes the module (a failed read there would fail every init, not one event).
 */
let boundSecrets: SecretSource = () => undefined;
let boundSecretsLoad: Promise<void> | undefined;

/** This function's bound secrets: empty until `loadFunctionSecrets` resolves. */
export const functionSecrets: SecretSource = (name) => boundSecrets(name);

/**
 * Fetches this function's bound secrets from SSM once per container (locally nothing is bound
 * and it resolves at once). A failed read is not kept: the next event tries again. Only entry
 * points whose function binds a secret call it (through `withFunctionSecrets`), so only their
 * bundles carry the SSM reader (ssm-parameters.ts).
 */
export function loadFunctionSecrets(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  boundSecretsLoad ??= loadSecrets(boundSecretNames(env), env).then(
    (source) => {
      boundSecrets = source;
    },
    (error: unknown) => {
      boundSecretsLoad = undefined;
      throw error;
    },
  );
  return boundSecretsLoad;
}

/** A handler that first makes sure this function's bound secrets are loaded. */
export function withFunctionSecrets<A extends unknown[], R>(
  handler: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    await loadFunctionSecrets();
    return handler(...args);
  };
}

/** Environment variables first, read at use (a local change is seen without a restart); then the secrets SST bound to this function. */
export function environmentSecrets(env: NodeJS.ProcessEnv = process.env): SecretSource {
  return firstSecret((name) => env[name], functionSecrets);
}

/** The bootstrap admin key, read at use: on AWS it is a bound secret, loaded on first event. */
function adminKeyOf(secret: SecretSource): string | undefined {
  const parsed = adminKeySchema.safeParse(secret("TOOLBUS_ADMIN_KEY"));
  if (!parsed.success) {
    throw new ValidationError("The function's environment is incomplete.", {
      details: zodIssues(parsed.error.issues, "TOOLBUS_ADMIN_KEY"),
    });
  }
  return parsed.data;
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
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    throw new ValidationError("The function's environment is incomplete.", {
      details: zodIssues(parsed.error.issues, "(environment)"),
    });
  }
  // A key in the environment is checked now; a bound one when it has been loaded.
  if (env.TOOLBUS_ADMIN_KEY) adminKeyOf(secret);
  const config = loadStageConfig(env);
  return {
    config,
    tableName: parsed.data.TOOLBUS_TABLE,
    busName: parsed.data.TOOLBUS_BUS,
    ...(parsed.data.TOOLBUS_SUBSCRIPTIONS_RULE
      ? { subscriptionsRule: parsed.data.TOOLBUS_SUBSCRIPTIONS_RULE }
      : {}),
    get adminKey() {
      return adminKeyOf(secret);
    },
    // Not for DynamoDB: its document client refuses cacheMiddleware.
    dynamodb: new DynamoDBClient(DYNAMODB_CLIENT_OPTIONS),
    ...(local.eventBridge ? { eventBridge: local.eventBridge } : {}),
    ...(local.appendLog ? { appendLog: local.appendLog } : {}),
    log:
      local.log ??
      createLogger({
        service: "toolbus",
        level: parsed.data.TOOLBUS_LOG_LEVEL,
        // No function name: each function has its own log group, which names it (`@log`).
        fields: { stage: config.stage },
      }),
    metrics: local.metrics ?? emfMetrics((line) => process.stdout.write(`${line}\n`), config.stage),
    secret,
  };
}
