import { existsSync } from "node:fs";
import {
  type AnyToolDefinition,
  type BusRule,
  busRules,
  DELIVERIES_HANDLER,
  EVENT_SOURCE,
  fedByBus,
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  REGISTERED_SECRET_PREFIX,
  registeredHandlerId,
  SCHEDULED_JOBS,
  STREAM_HANDLER,
  SUBSCRIPTIONS_HANDLER,
  SUBSCRIPTIONS_RULE,
  SWEEPER_HANDLER,
  TABLE,
  toolHandlerId,
  toolSpecOf,
} from "@toolbus/core";
import { CONNECTION_ITEM_PREFIX, CONNECTIONS_KEY_VARIABLE } from "@toolbus/core/connections/names";
import { RUN_LOG_ENTRY_FILTER } from "@toolbus/core/store/dynamodb";
import { builtinTools } from "@toolbus/tools";
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import * as acm from "aws-cdk-lib/aws-certificatemanager";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as iam from "aws-cdk-lib/aws-iam";
import * as kms from "aws-cdk-lib/aws-kms";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { DynamoEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import * as logs from "aws-cdk-lib/aws-logs";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Config as SstConfig } from "sst/config.js";
import {
  Api,
  Config,
  type FunctionProps,
  Script,
  Function as SstFunction,
  type StackContext,
} from "sst/constructs";
import { notifyAlarms } from "./alarm-topic";
import { CONNECTION_HANDLERS, nodejsFor, USER_CREDENTIAL_TOOLS } from "./bundling";
import { providerSecretNames, type StackConfig, searchSecretNames, stackConfigFor } from "./config";
import { LAMBDA_LOGGING } from "./lambda-logging";
import { auditStack } from "./nag";
import { addObservability } from "./observability";

/** Lambda's newest Node.js: what every function of ours runs (and what `npm start` runs locally). */
export const LAMBDA_RUNTIME = "nodejs24.x";

/**
 * How long one streamed response stays open before the follower resumes with Last-Event-ID.
 * Lambda does not document telling a streaming function that its client went away, so an
 * abandoned stream may hold its concurrency slot until this ends it: two minutes bounds that
 * (and a reconnection every two minutes costs one request). Always before the timeout.
 */
export const STREAM_HOLD_SECONDS = 120;
export const followMaxSeconds = (timeoutSeconds: number) =>
  Math.min(timeoutSeconds - 5, STREAM_HOLD_SECONDS);

/**
 * DynamoDB's item actions, each of which IAM authorizes with `dynamodb:LeadingKeys` (a
 * transaction's items count as these too). Scan has no leading key; none of ours may scan.
 */
export const ITEM_ACTIONS = [
  "BatchGetItem",
  "BatchWriteItem",
  "ConditionCheckItem",
  "DeleteItem",
  "GetItem",
  "PutItem",
  "Query",
  "UpdateItem",
] as const;

/** The partition keys of connected accounts' items (core's prefix: `CONN#`, `CONNSTATE#`, ...). */
export const CONNECTION_KEYS = `${CONNECTION_ITEM_PREFIX}*`;

/** CDK context key that replaces the stage's config file (tests, one-off experiments). */
export const CONFIG_CONTEXT = "toolbus:config";

/** The admin key is the API's own; every other secret belongs to a tool (its spec's setup). */
export const ADMIN_KEY_SECRET = "TOOLBUS_ADMIN_KEY";

/** The secrets a tool reads, from its spec (setup fields that name a secret). */
export function toolSecrets(tool: AnyToolDefinition): string[] {
  return toolSpecOf(tool)
    .setup.flatMap((field) => (field.secret ? [field.secret] : []))
    .sort();
}

/** The wiring table's handlers for registered (http, mcp) tools, named by core. */
const REGISTERED_HANDLERS: ReadonlySet<string> = new Set(REGISTERED_KINDS.map(registeredHandlerId));
export const isRegisteredHandler = (handler: string) => REGISTERED_HANDLERS.has(handler);

/** `tools/web_search` -> `ToolWebSearch`: a construct id per wiring-table handler. */
export function handlerConstructId(handler: string): string {
  return handler
    .split(/[/_-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")
    .replace(/^Tools/, "Tool");
}

/** A wiring-table pattern in CDK's spelling (`detail-type` is `detailType`). */
export function cdkEventPattern(pattern: Record<string, unknown>): events.EventPattern {
  const keys: Record<string, keyof events.EventPattern> = {
    version: "version",
    id: "id",
    "detail-type": "detailType",
    source: "source",
    account: "account",
    time: "time",
    region: "region",
    resources: "resources",
    detail: "detail",
  };
  return Object.fromEntries(
    Object.entries(pattern).map(([key, value]) => {
      const cdkKey = keys[key];
      if (!cdkKey)
        throw new Error(`The wiring table uses an event field CDK cannot express: ${key}`);
      return [cdkKey, value];
    }),
  );
}

/**
 * Lambda's on-failure destination for a queue (of an asynchronous invocation, or of an event
 * source mapping's batches), granting only what Lambda uses to deliver there
 * (`sqs:SendMessage`). CDK's SqsDestination and SqsDlq also grant GetQueueAttributes and
 * GetQueueUrl.
 */
export function deadLetterDestination(
  queue: sqs.IQueue,
): lambda.IDestination & lambda.IEventSourceDlq {
  return {
    bind(_scope: unknown, fn: lambda.IFunction) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({ actions: ["sqs:SendMessage"], resources: [queue.queueArn] }),
      );
      return { destination: queue.queueArn };
    },
  };
}

/**
 * How often Lambda retries a batch of the table's change stream that failed (each half again
 * after a split) before it gives up on it: the writer retries a lost race itself, so a batch
 * that still fails is broken, not busy.
 */
export const RUN_LOG_FEED_RETRIES = 10;

/**
 * One stage of Toolbus: the table, the bus with the wiring table's rules, a function per
 * handler, the HTTP API, the secrets, and a deploy-time seed of the catalog.
 */
export function Toolbus({ stack, app }: StackContext) {
  const tools = builtinTools;
  const byId = new Map(tools.map((tool) => [tool.spec.id, tool]));
  const timeoutOf = (tool: AnyToolDefinition) => toolSpecOf(tool).timeoutMs;
  const config: StackConfig = stackConfigFor(app.stage, {
    raw: app.node.tryGetContext(CONFIG_CONTEXT),
    tools: tools.map((tool) => {
      const fallback = toolSpecOf(tool).fallback;
      const fallbackTool = fallback ? byId.get(fallback) : undefined;
      return {
        id: tool.spec.id,
        timeoutMs: timeoutOf(tool) + (fallbackTool ? timeoutOf(fallbackTool) : 0),
        ...(tool.settings ? { settings: tool.settings } : {}),
      };
    }),
  });
  // Stages that do not retain data are disposable as a whole: `sst remove` leaves nothing.
  if (!config.data.retain) app.setDefaultRemovalPolicy("destroy");

  // ---- Storage: the single table, exactly as core defines it for every runtime.
  const key = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });
  const table = new dynamodb.Table(stack, "Table", {
    partitionKey: key(TABLE.partitionKey),
    sortKey: key(TABLE.sortKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: TABLE.ttlAttribute,
    pointInTimeRecoverySpecification: {
      pointInTimeRecoveryEnabled: config.data.pointInTimeRecovery,
    },
    deletionProtection: config.data.deletionProtection,
    removalPolicy: config.data.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    // The table's change stream (core's view type): on AWS it feeds the stage stream's
    // function with the run-log entries as they are written. Turning it on for an existing
    // table is an update in place.
    stream: dynamodb.StreamViewType[TABLE.stream],
  });
  // Core's indexes, by name: an existing stage's indexes keep their order and a new one comes
  // last.
  const indexes = [...TABLE.indexes].sort((a, b) => a.name.localeCompare(b.name));
  for (const index of indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: key(index.partitionKey),
      sortKey: key(index.sortKey),
      projectionType: dynamodb.ProjectionType[index.projection],
    });
  }
  // Every index the table has.
  const indexArns = indexes.map((index) => `${table.tableArn}/index/${index.name}`);

  // ---- Connected accounts: people's OAuth tokens live in the table (`CONN*` partition keys),
  // envelope-encrypted under this key with the item's {pk, sk} as encryption context. Only the
  // functions that connect accounts (the API's two entry points) or act as the caller with them
  // (the tools that may use a person's account, registered toolsets) use the key; every other
  // function with the table is denied those items outright.
  const connectionsKey = new kms.Key(stack, "ConnectionsKey", {
    description: `Toolbus ${app.stage}: envelope key of people's connected accounts' tokens`,
    enableKeyRotation: true,
    removalPolicy: config.data.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
  const useConnectionsKey = new iam.PolicyStatement({
    actions: ["kms:GenerateDataKey", "kms:Decrypt"],
    resources: [connectionsKey.keyArn],
    // Only with a connection item's key as encryption context ({pk, sk}, as core seals every
    // token blob): never a data key for anything but connected accounts' items.
    conditions: {
      "ForAnyValue:StringEquals": { "kms:EncryptionContextKeys": ["pk"] },
      StringLike: { "kms:EncryptionContext:pk": CONNECTION_KEYS },
    },
  });
  const denyConnectionItems = new iam.PolicyStatement({
    effect: iam.Effect.DENY,
    actions: ITEM_ACTIONS.map((action) => `dynamodb:${action}`),
    resources: [table.tableArn, ...indexArns],
    conditions: { "ForAnyValue:StringLike": { "dynamodb:LeadingKeys": [CONNECTION_KEYS] } },
  });
  for (const toolId of USER_CREDENTIAL_TOOLS) {
    if (!byId.has(toolId)) throw new Error(`Connected accounts name ${toolId}, no built-in tool.`);
  }
  /** Handlers of the functions that use connected accounts: all the others are denied them. */
  const usesConnections = CONNECTION_HANDLERS;
  /**
   * The secrets holding the stage's OAuth providers' client secrets (`connections.providers.
   * <name>.clientSecret` names one): the functions that use connected accounts finish
   * connections and refresh tokens, so each is bound to all of them.
   */
  const providerSecrets = providerSecretNames(config.toolbus);
  /**
   * What a function gets for connected accounts, beside its own statements: the key (and its
   * ARN in the environment) and the providers' client secrets if it uses them, else a Deny on
   * their items if it has the table.
   */
  const connectionsAccess = (
    handler: string,
    statements: readonly iam.PolicyStatement[],
  ): {
    statements: iam.PolicyStatement[];
    environment: Record<string, string>;
    secrets: readonly string[];
  } => {
    if (usesConnections.has(handler)) {
      return {
        statements: [useConnectionsKey],
        environment: { [CONNECTIONS_KEY_VARIABLE]: connectionsKey.keyArn },
        secrets: providerSecrets,
      };
    }
    const usesTable = statements.some((st) => st.actions.some((a) => a.startsWith("dynamodb:")));
    return { statements: usesTable ? [denyConnectionItems] : [], environment: {}, secrets: [] };
  };
  const onTable = (...actions: string[]) =>
    new iam.PolicyStatement({
      actions: actions.map((action) => `dynamodb:${action}`),
      resources: [table.tableArn],
    });
  const queryTableAndIndexes = new iam.PolicyStatement({
    actions: ["dynamodb:Query"],
    resources: [table.tableArn, ...indexArns],
  });
  // The catalog store lists the whole catalog with one Query on gsi1 (CATALOG / TOOLSET#...).
  const catalogIndex = TABLE.indexes.find((index) => index.name === "gsi1");
  if (!catalogIndex) throw new Error("The catalog store queries gsi1, which the table lacks.");
  const queryCatalog = new iam.PolicyStatement({
    actions: ["dynamodb:Query"],
    resources: [`${table.tableArn}/index/${catalogIndex.name}`],
  });

  // ---- The bus, and an archive of every Toolbus event for replay.
  const bus = new events.EventBus(stack, "Bus", { eventBusName: `toolbus-${app.stage}` });
  const archive = bus.archive("Archive", {
    archiveName: `toolbus-${app.stage}`,
    description: `Every Toolbus event on toolbus-${app.stage}, for replay`,
    eventPattern: { source: [EVENT_SOURCE] },
    // 0 keeps them indefinitely (no RetentionDays at all).
    ...(config.events.archiveRetentionDays > 0
      ? { retention: Duration.days(config.events.archiveRetentionDays) }
      : {}),
  });
  // CDK 2.224 writes an empty KmsKeyIdentifier when no key is given, which regions other than
  // us-east-1 are reported to refuse; absent means the archive uses an AWS-owned key.
  (archive.node.defaultChild as events.CfnArchive).addPropertyDeletionOverride("KmsKeyIdentifier");
  const publish = new iam.PolicyStatement({
    actions: ["events:PutEvents"],
    resources: [bus.eventBusArn],
  });
  // `/health` asks whether the bus answers without publishing anything.
  const describeBus = new iam.PolicyStatement({
    actions: ["events:DescribeEventBus"],
    resources: [bus.eventBusArn],
  });

  // ---- Secrets (values live in SSM, set with `npx sst secrets set`): the admin key, the
  // built-in tools', and the connection providers' client secrets. One secret per name: a
  // provider may name a tool's secret, which is then bound to the functions of both.
  const toolSecretNames = [...new Set(tools.flatMap(toolSecrets))];
  // The embedding provider's key: both API functions search.
  const searchSecrets = searchSecretNames(config.toolbus);
  const secretNames = [
    ...new Set([ADMIN_KEY_SECRET, ...toolSecretNames, ...providerSecrets, ...searchSecrets]),
  ];
  const secrets = new Map(secretNames.map((name) => [name, new Config.Secret(stack, name)]));
  const secretsNamed = (names: readonly string[]) =>
    [...new Set(names)].sort().map((name) => {
      const secret = secrets.get(name);
      if (!secret) throw new Error(`No secret ${name} is defined for this stage.`);
      return secret;
    });
  /**
   * Secrets that registered toolsets name after the deploy, so they cannot be bound: read on
   * demand (core's readStageSecrets) from where `sst secrets set` puts any secret of this stage,
   * and the app-wide fallback. Registrations may only name secrets under core's prefix
   * (REGISTERED_SECRET_PREFIX), so the grant is that prefix: never the admin key nor a built-in
   * tool's secret. The same ARNs SST's Config.Secret grants a bound secret; like SST, no KMS
   * grant: SecureStrings under the default aws/ssm key are decrypted by SSM for any caller
   * allowed to read them. SST sets the SST_APP / SST_STAGE / SST_SSM_PREFIX these paths are
   * built from on every Function.
   */
  const registeredSecretPaths = [false, true].map((fallback) =>
    SstConfig.pathFor({
      type: "Secret",
      id: `${REGISTERED_SECRET_PREFIX}*`,
      prop: "value",
      fallback,
    }),
  );
  for (const name of secretNames) {
    if (name.startsWith(REGISTERED_SECRET_PREFIX)) {
      throw new Error(`${name} is a built-in secret under the registrations' prefix.`);
    }
  }
  const readStageSecrets = new iam.PolicyStatement({
    actions: ["ssm:GetParameters"],
    resources: registeredSecretPaths.map(
      (path) => `arn:${stack.partition}:ssm:${app.region}:${app.account}:parameter${path}`,
    ),
  });
  /** The functions granted `readStageSecrets`, for the audit's note on that grant. */
  const readsRegisteredSecrets = new Set<SstFunction>();

  const environment = {
    TOOLBUS_TABLE: table.tableName,
    TOOLBUS_BUS: bus.eventBusName,
    TOOLBUS_CONFIG: config.toolbusJson,
  };

  /**
   * A function with its own role and log group, so its policy is exactly what is listed
   * here: its table actions, its bus, its secrets' parameters, its log group (and X-Ray when
   * tracing, which AWS only grants on `*`). No managed policy, no `*` resource of our own.
   */
  const handlerFunction = (
    id: string,
    props: {
      handler: string;
      size: { memoryMB: number; timeoutSeconds: number };
      statements: iam.PolicyStatement[];
      secrets: readonly string[];
      description: string;
      /** Asynchronous invocations (from the bus): Lambda's retries, then this queue. */
      deadLetters?: sqs.Queue;
      /** Variables of this function's own, beside the stage's. */
      environment?: Record<string, string>;
      /** A Function URL (SST's `url`), and reserved concurrency: the streaming endpoint's. */
      url?: FunctionProps["url"];
      reservedConcurrency?: number | null;
    },
  ) => {
    const file = `functions/${props.handler}.ts`;
    if (!existsSync(file)) {
      throw new Error(`The wiring table names handler ${props.handler} but ${file} is missing.`);
    }
    const logGroup = new logs.LogGroup(stack, `${id}Logs`, {
      retention: config.logs.retentionDays as logs.RetentionDays,
    });
    const role = new iam.Role(stack, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com"),
      description: `Toolbus ${app.stage}: ${props.description}`,
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [logGroup.logGroupArn],
      }),
    );
    const { handler: handlerId, size, deadLetters } = props;
    const connections = connectionsAccess(handlerId, props.statements);
    const fn = new SstFunction(stack, id, {
      handler: `functions/${handlerId}.handler`,
      description: props.description,
      runtime: LAMBDA_RUNTIME,
      architecture: "arm_64",
      memorySize: size.memoryMB,
      timeout: size.timeoutSeconds,
      tracing: config.tracing,
      role,
      logGroup,
      ...LAMBDA_LOGGING,
      environment: { ...environment, ...props.environment, ...connections.environment },
      bind: secretsNamed([...props.secrets, ...connections.secrets]),
      permissions: [...props.statements, ...connections.statements],
      nodejs: nodejsFor(handlerId),
      ...(props.url ? { url: props.url } : {}),
      ...(props.reservedConcurrency
        ? { reservedConcurrentExecutions: props.reservedConcurrency }
        : {}),
      ...(deadLetters
        ? {
            retryAttempts: config.events.handler.retryAttempts,
            maxEventAge: Duration.seconds(config.events.handler.maxEventAgeSeconds),
            onFailure: deadLetterDestination(deadLetters),
          }
        : {}),
    });
    if (props.statements.includes(readStageSecrets)) readsRegisteredSecrets.add(fn);
    return fn;
  };

  // ---- Bus handlers: one function and one dead-letter queue per wiring-table row, and a rule
  // for each row the bus feeds on AWS (fedByBus); the stream's function is fed by the table.
  const rules = busRules(tools.map((tool) => tool.spec.id));
  const handlers = new Map<string, SstFunction>();
  const deadLetterQueues = new Map<string, sqs.Queue>();
  /** Functions fed by the table's change stream: alarmed when they fall behind it. */
  const streamConsumers = new Map<string, SstFunction>();
  /** Dead-letter queues of targets and functions: no redrive policy names them. */
  const targetDeadLetters: sqs.Queue[] = [];
  const eventRules = new Map<string, events.Rule>();
  for (const rule of rules) {
    const id = handlerConstructId(rule.handler);
    const deadLetters = new sqs.Queue(stack, `${id}DeadLetters`, {
      retentionPeriod: Duration.days(config.events.deadLetterRetentionDays),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    deadLetterQueues.set(rule.handler, deadLetters);
    targetDeadLetters.push(deadLetters);
    if (!fedByBus(rule)) {
      // Fed by the table's change stream, not the bus: no rule, no queue. Lambda reads the
      // stream (its reads of a DynamoDB stream cost nothing) and hands the function one batch
      // per shard at a time, each shard's records in the order they were written, filtered to
      // new run-log entries (records filtered out are not billed either). A batch that keeps
      // failing is split in two, retried, and after RUN_LOG_FEED_RETRIES (or a day) goes to
      // `deadLetters` as a record of which shard positions were skipped, instead of holding up
      // its shard for good. Starting at LATEST: entries logged before the mapping existed are
      // not replayed into the stream.
      const fn = handlerFunction(id, {
        ...busHandlerAccess(rule),
        handler: rule.handler,
        description: rule.description,
      });
      fn.addEventSource(
        new DynamoEventSource(table, {
          startingPosition: lambda.StartingPosition.LATEST,
          batchSize: 100,
          parallelizationFactor: 1,
          bisectBatchOnError: true,
          retryAttempts: RUN_LOG_FEED_RETRIES,
          maxRecordAge: Duration.days(1),
          reportBatchItemFailures: false,
          onFailure: deadLetterDestination(deadLetters),
          // CDK types a filter pattern as a mutable record; core's constant is read-only.
          filters: [lambda.FilterCriteria.filter(RUN_LOG_ENTRY_FILTER as Record<string, unknown>)],
        }),
      );
      // The event source grants reading the table's stream (DescribeStream, GetRecords,
      // GetShardIterator on its ARN) and ListStreams, which has no resource-level permission.
      if (!fn.role) throw new Error(`${id} has no role`);
      NagSuppressions.addResourceSuppressions(
        fn.role,
        [
          {
            id: "AwsSolutions-IAM5",
            reason:
              "DynamoDB's ListStreams supports no resource-level permissions (AWS requires Resource *); Lambda's event source on the table's stream checks the role has it. It lists stream ARNs, and reads no record: those reads are granted on this table's stream alone.",
            appliesTo: ["Resource::*"],
          },
        ],
        true,
      );
      handlers.set(rule.handler, fn);
      streamConsumers.set(rule.handler, fn);
      continue;
    }
    const eventRule = new events.Rule(stack, `${id}Rule`, {
      eventBus: bus,
      ruleName: rule.name,
      description: rule.description,
      eventPattern: cdkEventPattern(rule.pattern),
      // Every rule's template says ENABLED, the subscriptions rule's too, though the API and
      // the sweeper switch it off while no subscription exists (SUBSCRIPTIONS_RULE): an update
      // that leaves the rule's properties as they were leaves its run-time state alone, and
      // one that changes them (its pattern, its description) puts it back on, which costs
      // invocations until the next sweep (a minute), never a delivery. Created DISABLED, such
      // an update would switch off the deliveries of existing subscriptions instead.
      enabled: true,
    });
    eventRules.set(rule.name, eventRule);
    const fn = handlerFunction(id, {
      ...busHandlerAccess(rule),
      handler: rule.handler,
      description: rule.description,
      deadLetters,
    });
    handlers.set(rule.handler, fn);
    eventRule.addTarget(
      new targets.LambdaFunction(fn, {
        deadLetterQueue: deadLetters,
        retryAttempts: config.events.delivery.retryAttempts,
        maxEventAge: Duration.seconds(config.events.delivery.maxEventAgeSeconds),
      }),
    );
    // The same target id the local runtime registers (packages/local applyWiring).
    (eventRule.node.defaultChild as events.CfnRule).addPropertyOverride("Targets.0.Id", "handler");
  }

  // ---- The subscriptions rule is on only while a subscription exists, so a stage without one
  // pays no fan-out invocation per event: the API switches it as subscriptions are made and
  // removed, the sweeper reconciles it every minute (core's DeliveryRule). They are told its
  // name, and may describe and switch that rule alone. Its name, not its Ref: a rule on a
  // custom bus answers Ref with "bus|rule".
  const subscriptionsRule = eventRules.get(SUBSCRIPTIONS_RULE);
  if (!subscriptionsRule) throw new Error(`The wiring table has no rule ${SUBSCRIPTIONS_RULE}.`);
  const switchSubscriptionsRule = (...actions: string[]) =>
    new iam.PolicyStatement({
      actions: actions.map((action) => `events:${action}`),
      resources: [subscriptionsRule.ruleArn],
    });
  const namesSubscriptionsRule = { TOOLBUS_SUBSCRIPTIONS_RULE: SUBSCRIPTIONS_RULE };

  /**
   * What a wiring-table handler may do: tools run calls; the recorder reads a call's record
   * (an event is recorded only when it matches it), reads where the run's log ends (Query)
   * and appends in one transaction that puts the entries and marks the call (Put, Update);
   * the stream's writer appends the run logs' new entries to the stage stream.
   */
  function busHandlerAccess(rule: BusRule) {
    if (rule.handler === SUBSCRIPTIONS_HANDLER) return subscriptionsAccess();
    if (rule.handler === STREAM_HANDLER) {
      return {
        size: config.functions.recorder,
        // Finds where the stream ends on a cold start (Get the head, Query the last chunks),
        // puts a chunk of entries (Put), moves the head on if no other writer did (a
        // conditional Update), and takes its chunk back after losing that race (Delete). It
        // reads no call: the table's change stream hands it the run-log entries themselves,
        // and reading that stream is granted by its event source.
        statements: [onTable("GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem")],
        secrets: [],
      };
    }
    if (rule.handler === RECORDER_HANDLER) {
      return {
        size: config.functions.recorder,
        statements: [onTable("GetItem", "Query", "PutItem", "UpdateItem")],
        secrets: [],
      };
    }
    if (isRegisteredHandler(rule.handler)) {
      return {
        size: config.functions.tool,
        // A built-in tool's access, plus reading the tool's spec from the catalog per call
        // (Get) and whatever stage secret its registration names. Never a delete: removing a
        // registered tool is the API's job.
        statements: [
          onTable("GetItem", "PutItem", "UpdateItem", "Query"),
          publish,
          readStageSecrets,
        ],
        // Nothing bound: no tool's secrets are known at deploy time.
        secrets: [],
      };
    }
    const tool = tools.find((t) => toolHandlerId(t.spec.id) === rule.handler);
    if (!tool) throw new Error(`No tool for handler ${rule.handler}`);
    const fallback = toolSpecOf(tool).fallback;
    const fallbackTool = fallback ? byId.get(fallback) : undefined;
    return {
      size: config.functions.tool,
      // Claim / complete the call (Update; a redelivery reads it), the result cache (Get, Put),
      // rate windows (Update), then announce the result (the recorder marks it logged).
      statements: [onTable("GetItem", "PutItem", "UpdateItem", "Query"), publish],
      // A fallback runs in the same function, so it gets the fallback's secrets too.
      secrets: [...toolSecrets(tool), ...(fallbackTool ? toolSecrets(fallbackTool) : [])],
    };
  }

  /**
   * The subscriptions fan-out (and its retry driver): reads subscriptions (Get, Query on
   * gsi1) and what is due (Query on gsi4, then BatchGetItem), writes deliveries (Put) and
   * failure streaks (Update); posts to the buses and queues the stage allows as targets, and
   * nowhere else.
   * Webhooks go out over HTTPS through the SSRF guard, with no IAM.
   */
  function subscriptionsAccess() {
    const allowed = config.toolbus.subscriptions.allowTargets;
    const buses = allowed.filter((target) => target.startsWith("arn:"));
    const queues = allowed.filter((target) => target.startsWith("https://sqs."));
    return {
      // A webhook may take its whole timeout to answer: sized like a tool, not the recorder.
      size: config.functions.tool,
      statements: [
        // BatchGetItem: the due deliveries' items, after their keys from gsi4.
        onTable("GetItem", "BatchGetItem", "PutItem", "UpdateItem"),
        queryTableAndIndexes,
        ...(buses.length > 0
          ? [new iam.PolicyStatement({ actions: ["events:PutEvents"], resources: buses })]
          : []),
        ...(queues.length > 0
          ? [
              new iam.PolicyStatement({
                actions: ["sqs:SendMessage"],
                resources: queues.map(queueArnOf),
              }),
            ]
          : []),
      ],
      secrets: [],
    };
  }

  /**
   * The sweeper finds stuck calls (Query on gsi4 for their keys, BatchGetItem for the calls),
   * fails them (Update) and announces each result; it reconciles the subscriptions rule with
   * whether a subscription exists (a Query on the table).
   */
  function sweeperAccess(handler: string) {
    if (handler !== SWEEPER_HANDLER) throw new Error(`No access is defined for job ${handler}.`);
    return {
      size: config.functions.recorder,
      statements: [
        onTable("BatchGetItem", "UpdateItem"),
        queryTableAndIndexes,
        publish,
        switchSubscriptionsRule("DescribeRule", "EnableRule", "DisableRule"),
      ],
      environment: namesSubscriptionsRule,
      secrets: [],
    };
  }

  // ---- Timed jobs (the sweeper, the deliveries' retry driver): schedules live on the
  // default bus, as AWS requires.
  for (const job of SCHEDULED_JOBS) {
    const id = handlerConstructId(job.handler);
    const fn = handlerFunction(id, {
      handler: job.handler,
      description: job.description,
      ...(job.handler === DELIVERIES_HANDLER ? subscriptionsAccess() : sweeperAccess(job.handler)),
    });
    handlers.set(job.handler, fn);
    new events.Rule(stack, `${id}Schedule`, {
      description: job.description,
      schedule: events.Schedule.expression(job.schedule),
      targets: [new targets.LambdaFunction(fn, { retryAttempts: 0 })],
    });
  }

  // ---- The HTTP API: one function, every path (Hono routes /health, /docs, /console, /v1/*, /mcp).
  // A call a caller waits for is run by invoking its handler's function synchronously (core's
  // lambdaDispatcher), so a tool still runs with only its own secrets and permissions; the bus
  // runs the rest. The API may invoke exactly the functions a call can be dispatched to: each
  // built-in tool's and the registered-tool handlers, never the recorder, the sweeper or the
  // seed. Unqualified ARNs only: it invokes the latest code, never a version or alias. Those
  // functions refer to nothing of the API's, so naming them here makes no dependency cycle.
  const dispatchable = [...tools.map((tool) => toolHandlerId(tool.spec.id)), ...REGISTERED_HANDLERS]
    .sort()
    .map((handler) => {
      const fn = handlers.get(handler);
      if (!fn) throw new Error(`The API dispatches to ${handler}, which has no function.`);
      return [handler, fn] as const;
    });
  const invokeHandlers = new iam.PolicyStatement({
    actions: ["lambda:InvokeFunction"],
    resources: dispatchable.map(([, fn]) => fn.functionArn),
  });
  // Calls, keys, catalog and capabilities are items (Get / Put / Update); listings and a run's
  // events are queries on the table and its indexes. Direct dispatch invokes the handlers'
  // functions; `/health` reads a key that is never stored and describes the bus.
  const serveCalls = [
    // BatchGetItem: the calls awaiting approval, after their keys from gsi4.
    onTable("GetItem", "BatchGetItem", "PutItem", "UpdateItem"),
    queryTableAndIndexes,
    publish,
    describeBus,
    invokeHandlers,
  ];
  // Handler id -> function name, for the dispatcher (core's FUNCTIONS_ENV).
  const dispatchTargets = stack.toJsonString(
    Object.fromEntries(dispatchable.map(([handler, fn]) => [handler, fn.functionName])),
  );

  // ---- The streaming endpoint: API Gateway buffers every response, so event streams and
  // /mcp are also served from a Function URL that streams (functions/api-stream.ts). Its auth
  // is the app's (the same API keys), as for the HTTP API; reserved concurrency caps it, since
  // API Gateway's throttle does not apply. It serves no admin route: no delete, no secret but
  // the admin key (to recognise it).
  const streaming = config.functions.streaming;
  const streamFunction = handlerFunction("ApiStream", {
    handler: "api-stream",
    description: "The Toolbus streaming endpoint (event streams and MCP)",
    size: streaming,
    statements: serveCalls,
    environment: {
      TOOLBUS_FUNCTIONS: dispatchTargets,
      TOOLBUS_FOLLOW_POLL_MS: String(config.streaming.pollIntervalMs),
      TOOLBUS_FOLLOW_MAX_MS: String(followMaxSeconds(streaming.timeoutSeconds) * 1000),
    },
    secrets: [ADMIN_KEY_SECRET, ...searchSecrets],
    url: { authorizer: "none", cors: false, streaming: true },
    reservedConcurrency: config.streaming.reservedConcurrency,
  });
  const streamUrl = streamFunction.url;
  if (!streamUrl) throw new Error("The streaming endpoint has no Function URL.");

  // ---- The HTTP API: one function, every path (Hono routes /health, /docs, /console, /v1/*, /mcp).
  // Registering or removing a registered toolset is one TransactWriteItems of conditional Put
  // and Delete items: IAM has no action for the transaction itself but authorizes each item as
  // its own operation (PutItem, DeleteItem; ConditionCheckItem only for standalone
  // ConditionCheck items, which are not used). DeleteItem runs only inside those transactions.
  // Registration checks that a named secret is set, lists a remote MCP server's tools with it,
  // and a capability refresh checks every registered secret: all read on demand, under the
  // registrations' prefix. The outbound HTTPS calls need no IAM.
  const apiFunction = handlerFunction("ApiFunction", {
    handler: "api",
    description: "The Toolbus HTTPS API (REST and MCP)",
    size: config.functions.api,
    // Making a subscription switches the subscriptions rule on, removing the last one off
    // (only the HTTP API serves /v1/subscriptions; the sweeper describes it).
    statements: [
      ...serveCalls,
      onTable("DeleteItem"),
      readStageSecrets,
      switchSubscriptionsRule("EnableRule", "DisableRule"),
    ],
    environment: {
      TOOLBUS_FUNCTIONS: dispatchTargets,
      TOOLBUS_STREAM_URL: streamUrl,
      ...namesSubscriptionsRule,
    },
    // The admin key, and every tool secret because POST /v1/capabilities/refresh detects and
    // verifies each capability (e.g. GitHub accepts GITHUB_TOKEN) — it never runs a tool.
    secrets: [ADMIN_KEY_SECRET, ...toolSecretNames, ...searchSecrets],
  });
  const domain = config.api.domain;
  // One catch-all route and no authorizer at the gateway: every path reaches the API function,
  // which authorizes each itself. The browser's side of connecting an account, GET
  // /connect/{provider} (its ticket) and /connect/{provider}/callback (its state), carries no
  // API key or bearer, so it must not be put behind a gateway authorizer if one is ever added.
  const api = new Api(stack, "Api", {
    routes: { $default: apiFunction },
    // No CORS at the gateway: the app decides (browsers are not the intended caller).
    cors: false,
    accessLog: {
      retention: logs.RetentionDays[config.logs.retentionDays]?.toLowerCase() as Lowercase<
        keyof typeof logs.RetentionDays
      >,
    },
    defaults: { throttle: config.api.throttle },
    ...(domain
      ? {
          customDomain: {
            domainName: domain.name,
            // DNS is the operator's (any provider): Toolbus only attaches the certificate.
            isExternalDomain: true,
            cdk: {
              certificate: acm.Certificate.fromCertificateArn(
                stack,
                "ApiCertificate",
                domain.certificateArn,
              ),
            },
          },
        }
      : {}),
  });

  // ---- On every deploy: seed the catalog and refresh capability statuses.
  const seed = handlerFunction("Seed", {
    handler: "seed",
    description: "Seeds the catalog and refreshes capabilities on deploy",
    size: config.functions.seed,
    // Reads and writes catalog entries (Get / Update) and stores capability statuses (Put).
    // The refresh also covers registered toolsets: it lists the catalog (Query on gsi1) for
    // the secrets they name and reads those on demand.
    statements: [onTable("GetItem", "PutItem", "UpdateItem"), queryCatalog, readStageSecrets],
    // Refreshing capabilities checks every built-in tool secret; it never needs the admin key,
    // which is neither bound nor under the registrations' prefix.
    secrets: toolSecretNames,
  });
  const seedScript = new Script(stack, "SeedScript", { onCreate: seed, onUpdate: seed });

  // ---- What needs a person: the stage's dashboard and alarms (stacks/observability.ts).
  const observability = addObservability(stack, {
    stage: app.stage,
    api,
    handlers: new Map([...handlers, ["api", apiFunction], ["api-stream", streamFunction]]),
    deadLetters: deadLetterQueues,
    streamConsumers,
  });
  notifyAlarms(stack, app.stage, observability.alarms, config.alarms);

  const ours = [...handlers.values(), apiFunction, streamFunction, seed];
  const roleOf = (fn: SstFunction) => {
    if (!fn.role) throw new Error(`${fn.node.id} has no role`);
    return fn.role;
  };
  auditStack(stack, {
    deadLetterQueues: targetDeadLetters,
    tracedRoles: config.tracing === "disabled" ? [] : ours.map(roleOf),
    registeredSecretReaders: ours.filter((fn) => readsRegisteredSecrets.has(fn)).map(roleOf),
    registeredSecretResources: registeredSecretPaths.map(
      (path) => `Resource::arn:<AWS::Partition>:ssm:${app.region}:${app.account}:parameter${path}`,
    ),
    api,
    seed,
    seedScript,
    ...(config.data.pointInTimeRecovery ? {} : { tableWithoutBackups: table }),
  });

  stack.addOutputs({
    ApiUrl: api.customDomainUrl ?? api.url,
    StreamUrl: streamUrl,
    ...(domain
      ? { ApiDomainTarget: api.cdk.domainName?.regionalDomainName ?? "", ApiGatewayUrl: api.url }
      : {}),
    Dashboard: observability.dashboard.dashboardName,
    BusName: bus.eventBusName,
    BusArn: bus.eventBusArn,
    TableName: table.tableName,
  });

  return {
    table,
    connectionsKey,
    bus,
    api,
    apiFunction,
    streamFunction,
    seed,
    handlers,
    rules,
    secrets,
    config,
  };
}

/** An SQS queue's ARN from its URL (https://sqs.<region>.amazonaws.com/<account>/<name>). */
export function queueArnOf(queueUrl: string): string {
  const url = new URL(queueUrl);
  const region = url.hostname.split(".")[1];
  const [, account, name] = url.pathname.split("/");
  const partition = url.hostname.endsWith(".cn") ? "aws-cn" : "aws";
  return `arn:${partition}:sqs:${region}:${account}:${name}`;
}
