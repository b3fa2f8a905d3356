import { execFile, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CreateEventBusCommand,
  ListRulesCommand,
  ListTargetsByRuleCommand,
} from "@aws-sdk/client-eventbridge";
import {
  busRules,
  createTableInput,
  DELIVERIES_HANDLER,
  fedByBus,
  parseStageConfig,
  REGISTERED_SECRET_PREFIX,
  SCHEDULED_JOBS,
  SUBSCRIPTIONS_HANDLER,
  SUBSCRIPTIONS_RULE,
  SWEEPER_HANDLER,
  TABLE,
} from "@toolbus/core";
import { CONNECTION_ITEM_PREFIX, CONNECTIONS_KEY_VARIABLE } from "@toolbus/core/connections/names";
import { FUNCTIONS_ENV, parseFunctions } from "@toolbus/core/dispatch";
import {
  boundSecretNames,
  SST_SECRET_PLACEHOLDER,
  secretParameterNames,
} from "@toolbus/core/secrets";
import { RUN_LOG_ENTRY_FILTER } from "@toolbus/core/store/dynamodb";
import { applyWiring, localFunctionName } from "@toolbus/local";
import {
  type EventBridgeServer,
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "@toolbus/local/bus";
import { builtinTools } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  handlerIdFor,
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  STREAM_HANDLER,
} from "../packages/core/src/wiring";
import { bundleBudgetKB, OVER_BUDGET } from "../stacks/budgets";
import { bundleFiles, bundleSizes, codeOf } from "../stacks/bundle-files";
import { SPLIT_HANDLERS, UNUSED_CREDENTIAL_PROVIDERS } from "../stacks/bundling";
import { providerSecretNames, STAGE_FILES, stackConfigFor } from "../stacks/config";
import { metricMathProblems } from "../stacks/metric-math";
import { BACKLOG_ALARM_SECONDS, HANDLER_ERROR_RATE_EXPRESSION } from "../stacks/observability";
import { type Synthesized, synthesizeStage } from "../stacks/synth";
import {
  ADMIN_KEY_SECRET,
  CONFIG_CONTEXT,
  followMaxSeconds,
  isRegisteredHandler,
  LAMBDA_RUNTIME,
  RUN_LOG_FEED_RETRIES,
  STREAM_HOLD_SECONDS,
  toolSecrets,
} from "../stacks/Toolbus";
import "./setup/context";
import { createTestTable, testDynamoDbClient } from "./support/dynamodb";
import { STREAMING_INVOKER, StreamedResponses } from "./support/lambda-streaming";
import { startTestToolbus } from "./support/toolbus";

// Synthesizing bundles ten functions with esbuild: tens of seconds per stage, done once each.
const STAGES = ["dev", "prod"] as const;
type Stage = (typeof STAGES)[number];
const synthesized = new Map<Stage, Synthesized>();

/**
 * Connected accounts as an operator would configure them: two providers whose client secrets
 * are secrets of the stage, one of them a name a built-in tool reads too (one secret, bound to
 * the functions of both), and a public client with none.
 */
const CONNECTIONS = {
  publicUrl: "https://tools.toolbus.test",
  providers: {
    github: { clientId: "Iv1.toolbus", clientSecret: "GITHUB_OAUTH_SECRET" },
    google: { clientId: "toolbus.apps.googleusercontent.com", clientSecret: "GOOGLE_OAUTH_SECRET" },
    acme: {
      clientId: "toolbus",
      clientSecret: "GITHUB_TOKEN",
      authorizeUrl: "https://id.acme.test/authorize",
      tokenUrl: "https://id.acme.test/token",
    },
    pub: {
      clientId: "toolbus-public",
      authorizeUrl: "https://id.pub.test/authorize",
      tokenUrl: "https://id.pub.test/token",
    },
  },
  credentials: { github_api: "user", calendar: "user" },
};

/** The secrets each stage's connection providers name: prod's, as the tests fill it in. */
const PROVIDER_SECRETS: Record<Stage, readonly string[]> = {
  dev: [],
  prod: ["GITHUB_OAUTH_SECRET", "GITHUB_TOKEN", "GOOGLE_OAUTH_SECRET"],
};

/**
 * prod ships with its alarm addresses left to fill in, which refuses to deploy as it is; the
 * tests fill in one address, a custom domain and connected accounts (CONNECTIONS) as an
 * operator would, and leave every other setting as shipped. dev is as shipped: no providers.
 */
const rawConfigOf = (stage: Stage) =>
  stage === "prod"
    ? {
        ...(STAGE_FILES.prod as Record<string, Json>),
        toolbus: {
          ...(STAGE_FILES.prod as Record<string, Json>).toolbus,
          connections: CONNECTIONS,
        },
        alarms: { emails: ["oncall@toolbus.test"] },
        api: {
          ...(STAGE_FILES.prod as Record<string, Json>).api,
          domain: {
            name: "tools.toolbus.test",
            certificateArn:
              "arn:aws:acm:us-east-1:123456789012:certificate/0f6c1e2a-1111-4222-8333-944455556666",
          },
        },
      }
    : STAGE_FILES[stage];

beforeAll(async () => {
  for (const stage of STAGES) {
    const result = await synthesizeStage(stage, {
      context: { [CONFIG_CONTEXT]: rawConfigOf(stage) },
    });
    synthesized.set(stage, result);
    console.log(`synthesized ${stage} in ${(result.durationMs / 1000).toFixed(1)} s`);
  }
}, 900_000);

afterAll(async () => {
  for (const result of synthesized.values()) await result.cleanup();
});

// ---- Reading the template -------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is untyped by nature.
type Json = any;
interface Resource {
  Type: string;
  Properties: Json;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

/** A function's bundle as SST built it: its entry file. */
function bundleEntry(s: { result: Synthesized }, handler: string): string {
  const bundle = s.result.bundles.get(`functions/${handler}`);
  if (!bundle) throw new Error(`no bundle for ${handler}`);
  return bundle;
}

/** The code a function loads on a cold start: its bundle, or its entry and static chunks. */
const bundleCode = (s: { result: Synthesized }, handler: string) =>
  codeOf(bundleFiles(bundleEntry(s, handler)).coldStart);

/** All of a function's code, the chunks it loads on a path's first use included. */
function artifactCode(s: { result: Synthesized }, handler: string): string {
  const { coldStart, lazy } = bundleFiles(bundleEntry(s, handler));
  return codeOf([...coldStart, ...lazy]);
}

function stageOf(stage: Stage) {
  const result = synthesized.get(stage);
  if (!result) throw new Error(`${stage} was not synthesized`);
  const json = result.template.toJSON() as { Resources: Json; Outputs: Json };
  const all = Object.entries(json.Resources) as [string, Resource][];
  const ofType = (type: string) => all.filter(([, r]) => r.Type === type);
  const only = (type: string) => {
    const found = ofType(type);
    expect(found, type).toHaveLength(1);
    return found[0] as [string, Resource];
  };
  const [tableId] = only("AWS::DynamoDB::Table");
  const [busId] = only("AWS::Events::EventBus");
  const [keyId] = only("AWS::KMS::Key");
  /** Our functions by wiring-table handler id (`tools/web_search`, `recorder`, `api`, `seed`). */
  const functions = new Map(
    ofType("AWS::Lambda::Function")
      .filter(([, r]) => String(r.Properties.Handler).startsWith("functions/"))
      .map(([id, r]) => [String(r.Properties.Handler).replace(/^functions\/|\.handler$/g, ""), id]),
  );
  const fn = (handler: string) => {
    const id = functions.get(handler);
    if (!id) throw new Error(`No function for ${handler}`);
    return { id, resource: json.Resources[id] as Resource };
  };
  const arnOf = (value: Json) => value?.["Fn::GetAtt"]?.[1] === "Arn" && value["Fn::GetAtt"][0];
  const roleOf = (functionId: string) =>
    arnOf(json.Resources[functionId]?.Properties.Role) as string;
  const policiesOf = (roleId: string) =>
    ofType("AWS::IAM::Policy").filter(([, r]) =>
      r.Properties.Roles.some((ref: Json) => ref.Ref === roleId),
    );
  // Pattern rules are the wiring table's; schedule rules (the sweeper) are checked on their own.
  const rules = ofType("AWS::Events::Rule").filter(([, r]) => r.Properties.EventPattern);
  const schedules = ofType("AWS::Events::Rule").filter(([, r]) => r.Properties.ScheduleExpression);
  const rule = (name: string) => rules.find(([, r]) => r.Properties.Name === name);
  /** The table's change stream, as the template refers to it. */
  const tableStreamArn = { "Fn::GetAtt": [tableId, "StreamArn"] };
  const isTableStream = (value: Json) => JSON.stringify(value) === JSON.stringify(tableStreamArn);
  /** The event source mappings that read the table's change stream. */
  const tableStreamSources = ofType("AWS::Lambda::EventSourceMapping").filter(([, r]) =>
    isTableStream(r.Properties.EventSourceArn),
  );
  /** Where a function's failures go: its asynchronous invocations', or its stream batches'. */
  const onFailureOf = (functionId: string) =>
    arnOf(
      [
        ...ofType("AWS::Lambda::EventInvokeConfig"),
        ...ofType("AWS::Lambda::EventSourceMapping"),
      ].find(([, c]) => c.Properties.FunctionName.Ref === functionId)?.[1].Properties
        .DestinationConfig?.OnFailure?.Destination,
    );
  /** Every (action, resource) pair a function's role is allowed, one per line. */
  const grantsOf = (functionId: string) =>
    policiesOf(roleOf(functionId)).flatMap(([, policy]) =>
      policy.Properties.PolicyDocument.Statement.flatMap((statement: Json) =>
        [statement.Action]
          .flat()
          .flatMap((action: string) =>
            [statement.Resource]
              .flat()
              .map((resource: Json) => ({ effect: statement.Effect, action, resource })),
          ),
      ),
    );
  return {
    result,
    json,
    all,
    ofType,
    only,
    tableId,
    busId,
    keyId,
    functions,
    fn,
    arnOf,
    roleOf,
    policiesOf,
    grantsOf,
    rules,
    rule,
    tableStreamArn,
    isTableStream,
    tableStreamSources,
    onFailureOf,
    schedules,
    config: stackConfigFor(stage, { raw: rawConfigOf(stage) }),
  };
}

const toolIds = builtinTools.map((tool) => tool.spec.id);
const wiring = busRules(toolIds);
/** The wiring table's rows the bus feeds on AWS: each has its rule there. */
const busFed = wiring.filter(fedByBus);
const TOOL_SECRET_NAMES = [...new Set(builtinTools.flatMap(toolSecrets))].sort();
const ALL_SECRETS = [ADMIN_KEY_SECRET, ...TOOL_SECRET_NAMES].sort();
/** The generic handlers of registered tools, by the `implementation` they are routed on. */
const REGISTERED = [
  { kind: "http", rule: "registered-http", handler: "registered/http" },
  { kind: "mcp", rule: "registered-mcp", handler: "registered/mcp" },
] as const;
/**
 * The handlers a call can be dispatched to, as the call service routes them (handlerIdFor):
 * every built-in tool's and one per registered-tool kind. The API may invoke exactly these.
 */
const DISPATCHABLE = [
  ...toolIds.map((toolId) => handlerIdFor({ toolId, implementation: "builtin" })),
  ...REGISTERED_KINDS.map((kind) => handlerIdFor({ toolId: "registered", implementation: kind })),
].sort();
/** The API's entry points: behind API Gateway, and the streaming Function URL. Both run calls. */
const SERVES_CALLS: ReadonlySet<string> = new Set(["api", "api-stream"]);
/**
 * The functions that use people's connected accounts: the API's two entry points (connect,
 * list, disconnect), the built-in tools that may act as their caller, and registered toolsets.
 * They alone hold the connections key; every other function is denied `CONN*` items.
 */
const USES_CONNECTIONS: ReadonlySet<string> = new Set([
  "api",
  "api-stream",
  "tools/calendar",
  "tools/github_api",
  ...REGISTERED.map((e) => e.handler),
]);
/** DynamoDB's item actions, all of which IAM checks against `dynamodb:LeadingKeys`. */
const ITEM_ACTIONS = [
  "BatchGetItem",
  "BatchWriteItem",
  "ConditionCheckItem",
  "DeleteItem",
  "GetItem",
  "PutItem",
  "Query",
  "UpdateItem",
].map((action) => `dynamodb:${action}`);
/** Every connection item's partition key: core's prefix, then anything. */
const CONNECTION_KEYS = `${CONNECTION_ITEM_PREFIX}*`;
const DENY_CONNECTION_ITEMS = {
  "ForAnyValue:StringLike": { "dynamodb:LeadingKeys": [CONNECTION_KEYS] },
};
const WITH_ITEM_KEY = {
  "ForAnyValue:StringEquals": { "kms:EncryptionContextKeys": ["pk"] },
  StringLike: { "kms:EncryptionContext:pk": CONNECTION_KEYS },
};
/** Core's connection items' partition keys (a connection, a pending state, a ticket). */
const CONNECTION_PKS = [
  `${CONNECTION_ITEM_PREFIX}#user-1`,
  `${CONNECTION_ITEM_PREFIX}STATE#ab12`,
  `${CONNECTION_ITEM_PREFIX}TICKET#cd34`,
];

/** What a direct dispatch skips on the bus: absent, or anything but "direct". */
const NOT_DIRECT = [{ exists: false }, { "anything-but": "direct" }];

/**
 * A template value with each `{"Ref": <function>}` replaced by `render(<logical id>)`, the
 * way CloudFormation fills in a function's name; undefined if it refers to anything else.
 */
function renderRefs(value: Json, render: (logicalId: string) => string): string | undefined {
  if (typeof value === "string") return value;
  const [separator, parts] = value?.["Fn::Join"] ?? [];
  if (typeof separator !== "string" || !Array.isArray(parts)) return undefined;
  const rendered = parts.map((part: Json) =>
    typeof part === "string"
      ? part
      : typeof part?.Ref === "string" && !part.Ref.startsWith("AWS::")
        ? render(part.Ref)
        : undefined,
  );
  return rendered.includes(undefined) ? undefined : rendered.join(separator);
}

/** The longest name Lambda allows, as CloudFormation might generate it for a function. */
const longestFunctionName = (logicalId: string) =>
  `toolbus-prod-${logicalId}-`.padEnd(64, "X").slice(0, 64);

/** Functions that read secrets named at run time (registered toolsets) from the stage's SSM. */
const READS_STAGE_SECRETS = new Set(["api", "seed", ...REGISTERED.map((e) => e.handler)]);

/**
 * A resource ARN as CloudFormation would resolve it in us-east-1 of the synthesis account,
 * or undefined if it refers to anything but the partition.
 */
function renderArn(resource: Json): string | undefined {
  if (typeof resource === "string") return resource;
  const [separator, parts] = resource?.["Fn::Join"] ?? [];
  if (typeof separator !== "string" || !Array.isArray(parts)) return undefined;
  const rendered = parts.map((part: Json) =>
    typeof part === "string" ? part : part?.Ref === "AWS::Partition" ? "aws" : undefined,
  );
  return rendered.includes(undefined) ? undefined : rendered.join(separator);
}

/** Whether an IAM resource pattern matches an ARN (`*` any run of characters, `?` one). */
function iamMatches(pattern: string, arn: string): boolean {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${escaped.replace(/\*/g, ".*").replace(/\?/g, ".")}$`).test(arn);
}

const parameterArn = (name: string) => `arn:aws:ssm:us-east-1:123456789012:parameter${name}`;

/** Every index the deployed table has. */
const INDEX_NAMES = TABLE.indexes.map((index) => index.name).sort();

/** What each function is denied: every function but those using connected accounts, `CONN*` items. */
function expectedDenied(handler: string): string[] {
  if (USES_CONNECTIONS.has(handler)) return [];
  const resources = ["table", ...INDEX_NAMES.map((name) => `index/${name}`)];
  return ITEM_ACTIONS.flatMap((action) => resources.map((r) => `${action} ${r}`)).sort();
}

/** Every secret a stage defines: the admin key, the tools' and its connection providers'. */
const stageSecrets = (stage: Stage) =>
  [...new Set([...ALL_SECRETS, ...PROVIDER_SECRETS[stage]])].sort();

/** Which secrets a function may read on its own: the admin key only on the API's entry points. */
function ownSecrets(handler: string): string[] {
  if (handler === "api") return ALL_SECRETS;
  // The streaming endpoint only needs to recognise the admin key; it refreshes no capability.
  if (handler === "api-stream") return [ADMIN_KEY_SECRET];
  if (handler === "seed") return TOOL_SECRET_NAMES;
  const tool = builtinTools.find((t) => `tools/${t.spec.id}` === handler);
  if (!tool) return [];
  const fallback = builtinTools.find((t) => t.spec.id === tool.spec.fallback);
  return [...new Set([...toolSecrets(tool), ...(fallback ? toolSecrets(fallback) : [])])].sort();
}

/**
 * Which secrets each function may read on `stage`: its own, and the connection providers'
 * client secrets on the functions that use connected accounts (they finish connections and
 * refresh tokens), and on no other.
 */
function expectedSecrets(handler: string, stage: Stage): string[] {
  const providers = USES_CONNECTIONS.has(handler) ? PROVIDER_SECRETS[stage] : [];
  return [...new Set([...ownSecrets(handler), ...providers])].sort();
}

/**
 * Each function's whole IAM access, as `action resource` lines. Resources are named by what
 * they are: `table`, `index/gsi1`, `bus`, `own-logs`, `own-dead-letters`, `function:<handler>`,
 * `secret:<NAME>` / `secret-fallback:<NAME>` (`<NAME>` `*` for any secret of the stage), or `*`.
 */
function expectedAccess(handler: string, stage: Stage, tracing: boolean): string[] {
  const lines = ["logs:CreateLogStream own-logs", "logs:PutLogEvents own-logs"];
  const table = (...actions: string[]) => actions.map((a) => `dynamodb:${a} table`);
  if (handler === "recorder") {
    lines.push(
      "sqs:SendMessage own-dead-letters",
      ...table("GetItem", "Query", "PutItem", "UpdateItem"),
    );
  } else if (handler === STREAM_HANDLER) {
    // Finds the stream's end (Get, Query), puts a chunk, moves the head, takes its chunk back
    // after a lost race (Delete); reads the table's change stream (the event source's grants,
    // ListStreams on `*` as AWS requires) and sends a batch that keeps failing to its own
    // dead letters. No call is read: the stream hands it the run-log entries themselves.
    lines.push(
      ...table("GetItem", "Query", "PutItem", "UpdateItem", "DeleteItem"),
      "dynamodb:DescribeStream table-stream",
      "dynamodb:GetRecords table-stream",
      "dynamodb:GetShardIterator table-stream",
      "dynamodb:ListStreams *",
      "sqs:SendMessage own-dead-letters",
    );
  } else if (SERVES_CALLS.has(handler)) {
    lines.push(
      // Only the API behind API Gateway removes registered toolsets.
      ...table(
        "GetItem",
        // The calls awaiting approval, after their keys from gsi4.
        "BatchGetItem",
        "PutItem",
        "UpdateItem",
        ...(handler === "api" ? ["DeleteItem"] : []),
        "Query",
      ),
      ...INDEX_NAMES.map((name) => `dynamodb:Query index/${name}`),
      "events:PutEvents bus",
      // `/health` asks whether the bus answers.
      "events:DescribeEventBus bus",
      // Direct dispatch: a synchronous Invoke of the handler a call belongs to.
      ...DISPATCHABLE.map((target) => `lambda:InvokeFunction function:${target}`),
      // Making the first subscription switches the subscriptions rule on, removing the last
      // one off: only the API behind API Gateway serves /v1/subscriptions.
      ...(handler === "api"
        ? ["events:DisableRule subscriptions-rule", "events:EnableRule subscriptions-rule"]
        : []),
    );
  } else if (handler === "seed") {
    lines.push(...table("GetItem", "PutItem", "UpdateItem"), "dynamodb:Query index/gsi1");
  } else if (handler === SUBSCRIPTIONS_HANDLER || handler === DELIVERIES_HANDLER) {
    // Reads subscriptions and what is due, writes deliveries and failure streaks. No bus and
    // no queue: the stages allow no subscription targets of those kinds.
    lines.push(
      ...(handler === SUBSCRIPTIONS_HANDLER ? ["sqs:SendMessage own-dead-letters"] : []),
      ...table("GetItem", "BatchGetItem", "PutItem", "UpdateItem", "Query"),
      ...INDEX_NAMES.map((name) => `dynamodb:Query index/${name}`),
    );
  } else if (handler === SWEEPER_HANDLER) {
    // Stuck, waiting and unannounced calls: keys from gsi4, then the calls (BatchGetItem).
    lines.push(
      ...table("BatchGetItem", "UpdateItem", "Query"),
      ...INDEX_NAMES.map((name) => `dynamodb:Query index/${name}`),
      "events:PutEvents bus",
      // The subscriptions rule's reconcile: its state, switched to agree with the table.
      "events:DescribeRule subscriptions-rule",
      "events:DisableRule subscriptions-rule",
      "events:EnableRule subscriptions-rule",
    );
  } else {
    lines.push(
      "sqs:SendMessage own-dead-letters",
      ...table("GetItem", "PutItem", "UpdateItem", "Query"),
      "events:PutEvents bus",
    );
  }
  const secretNames = [
    ...expectedSecrets(handler, stage),
    ...(READS_STAGE_SECRETS.has(handler) ? [`${REGISTERED_SECRET_PREFIX}*`] : []),
  ];
  for (const name of secretNames) {
    lines.push(`ssm:GetParameters secret:${name}`, `ssm:GetParameters secret-fallback:${name}`);
  }
  // Connected accounts' tokens: a data key to encrypt them, and decrypting it again.
  if (USES_CONNECTIONS.has(handler)) {
    lines.push("kms:Decrypt connections-key", "kms:GenerateDataKey connections-key");
  }
  // The documented exception: X-Ray grants no resource-level permissions, so AWS requires `*`.
  if (tracing) lines.push("xray:PutTelemetryRecords *", "xray:PutTraceSegments *");
  return lines.sort();
}

const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

/**
 * Actions AWS only grants on `*` (no resource-level permissions). Nothing else may use it.
 * ListStreams: the stream function's event source (Lambda checks the role may list streams).
 */
const STAR_RESOURCE_ACTIONS = new Set([
  "xray:PutTraceSegments",
  "xray:PutTelemetryRecords",
  "dynamodb:ListStreams",
]);

describe.each(STAGES)("the %s stack", (stage) => {
  it("builds the table from core's single definition", () => {
    const s = stageOf(stage);
    const [, table] = s.only("AWS::DynamoDB::Table");
    const expected = createTableInput("unused", { changeStream: true });
    const p = table.Properties;
    expect(p.KeySchema).toEqual(expected.KeySchema);
    expect(p.AttributeDefinitions).toEqual(
      expect.arrayContaining(expected.AttributeDefinitions ?? []),
    );
    expect(p.AttributeDefinitions).toHaveLength(expected.AttributeDefinitions?.length ?? 0);
    // Core's indexes, by name.
    expect(p.GlobalSecondaryIndexes).toEqual(
      [...(expected.GlobalSecondaryIndexes ?? [])].sort((a, b) =>
        String(a.IndexName).localeCompare(String(b.IndexName)),
      ),
    );
    expect(p.BillingMode).toBe("PAY_PER_REQUEST");
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: TABLE.ttlAttribute, Enabled: true });
    // The change stream that feeds the stage stream: new images, as core defines it.
    expect(TABLE.stream).toBe("NEW_IMAGE");
    expect(expected.StreamSpecification).toEqual({
      StreamEnabled: true,
      StreamViewType: "NEW_IMAGE",
    });
    expect(p.StreamSpecification).toEqual({ StreamViewType: "NEW_IMAGE" });
    // Locally nothing reads it: a table made for `npm start` has none unless asked.
    expect(createTableInput("unused").StreamSpecification).toBeUndefined();
  });

  it("deletes one index from a stage of the release before (gsi2, whole items) and changes none", () => {
    // CloudFormation creates or deletes one global secondary index per table update: the
    // release before had gsi1, gsi2, gsi3 and gsi4, exactly so; this one deletes gsi2, which
    // gsi4 replaced.
    const s = stageOf(stage);
    const [, table] = s.only("AWS::DynamoDB::Table");
    const index = (name: string, keys: string, projection: string) => ({
      IndexName: name,
      KeySchema: [
        { AttributeName: `${keys}pk`, KeyType: "HASH" },
        { AttributeName: `${keys}sk`, KeyType: "RANGE" },
      ],
      Projection: { ProjectionType: projection },
    });
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      index("gsi1", "gsi1", "ALL"),
      index("gsi3", "gsi3", "KEYS_ONLY"),
      index("gsi4", "gsi2", "KEYS_ONLY"),
    ]);
    const attributes = table.Properties.AttributeDefinitions.map(
      (attribute: { AttributeName: string }) => attribute.AttributeName,
    );
    expect(attributes.sort()).toEqual([
      "gsi1pk",
      "gsi1sk",
      "gsi2pk",
      "gsi2sk",
      "gsi3pk",
      "gsi3sk",
      "pk",
      "sk",
    ]);
  });

  it("protects production data and keeps other stages removable", () => {
    const s = stageOf(stage);
    const [, table] = s.only("AWS::DynamoDB::Table");
    const production = stage === "prod";
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({
      PointInTimeRecoveryEnabled: production,
    });
    expect(table.Properties.DeletionProtectionEnabled).toBe(production);
    expect(table.DeletionPolicy).toBe(production ? "Retain" : "Delete");
    expect(table.UpdateReplacePolicy).toBe(production ? "Retain" : "Delete");
    if (!production) {
      // A removable stage leaves nothing behind: not a log group, not a queue.
      // (No DeletionPolicy is CloudFormation's default: delete.)
      for (const [id, resource] of s.all)
        expect(resource.DeletionPolicy ?? "Delete", id).toBe("Delete");
    }
  });

  it("names the bus toolbus-<stage> and archives every Toolbus event for the stage's retention", () => {
    const s = stageOf(stage);
    const [, bus] = s.only("AWS::Events::EventBus");
    expect(bus.Properties.Name).toBe(`toolbus-${stage}`);
    const [, archive] = s.only("AWS::Events::Archive");
    expect(archive.Properties.EventPattern).toEqual({ source: ["toolbus"] });
    expect(archive.Properties.SourceArn).toEqual({ "Fn::GetAtt": [s.busId, "Arn"] });
    expect(archive.Properties.RetentionDays).toBe(s.config.events.archiveRetentionDays);
    // No empty key id (CDK's default), which regions other than us-east-1 refuse.
    expect(archive.Properties).not.toHaveProperty("KmsKeyIdentifier");
  });

  it("creates exactly the rules of the wiring table's bus-fed rows, each targeting its handler's function", () => {
    const s = stageOf(stage);
    // The stream's row alone is fed by the table's change stream: it has no rule on AWS.
    expect(wiring.filter((r) => !fedByBus(r)).map((r) => r.handler)).toEqual([STREAM_HANDLER]);
    expect(busFed.length).toBe(wiring.length - 1);
    expect(s.rules.map(([, r]) => r.Properties.Name).sort()).toEqual(
      busFed.map((r) => r.name).sort(),
    );
    for (const wired of busFed) {
      const found = s.rule(wired.name);
      if (!found) throw new Error(`no rule ${wired.name}`);
      const [, rule] = found;
      expect(rule.Properties.EventPattern, wired.name).toEqual(wired.pattern);
      expect(rule.Properties.EventBusName).toEqual({ Ref: s.busId });
      expect(rule.Properties.Targets).toHaveLength(1);
      const [target] = rule.Properties.Targets;
      expect(target.Id).toBe("handler");
      expect(target.Arn).toEqual({ "Fn::GetAtt": [s.fn(wired.handler).id, "Arn"] });
    }
    // No rule of any kind (a schedule's neither) targets the stream's function, and no queue
    // is FIFO: the bus feeds it nothing on AWS.
    const streamId = s.fn(STREAM_HANDLER).id;
    for (const [id, rule] of s.ofType("AWS::Events::Rule")) {
      for (const target of rule.Properties.Targets ?? []) {
        expect(JSON.stringify(target), id).not.toContain(`"${streamId}"`);
      }
    }
    expect(s.rule(STREAM_HANDLER)).toBeUndefined();
    for (const [id, queue] of s.ofType("AWS::SQS::Queue")) {
      expect(queue.Properties.FifoQueue, id).toBeUndefined();
    }
  });

  it("feeds the stream's function from the table's change stream: new run-log entries, in order per shard, failures to its dead letters", () => {
    const s = stageOf(stage);
    const streamId = s.fn(STREAM_HANDLER).id;
    // Exactly one mapping on the table's stream, the stream function's; no other mapping at all.
    expect(s.tableStreamSources).toHaveLength(1);
    expect(s.ofType("AWS::Lambda::EventSourceMapping")).toHaveLength(1);
    const [[, mapping]] = s.tableStreamSources as [[string, Resource]];
    const p = mapping.Properties;
    expect(p.EventSourceArn).toEqual(s.tableStreamArn);
    expect(p.FunctionName).toEqual({ Ref: streamId });
    expect(p).toMatchObject({
      StartingPosition: "LATEST",
      BatchSize: 100,
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: RUN_LOG_FEED_RETRIES,
      MaximumRecordAgeInSeconds: 86_400,
    });
    expect(RUN_LOG_FEED_RETRIES).toBeGreaterThan(0);
    // Whole batches only: the writer never reports single records as failed.
    expect(p.FunctionResponseTypes ?? []).toEqual([]);
    // Only new run-log entries reach it: core's filter, exactly.
    expect(p.FilterCriteria.Filters).toHaveLength(1);
    expect(JSON.parse(p.FilterCriteria.Filters[0].Pattern)).toEqual(
      JSON.parse(JSON.stringify(RUN_LOG_ENTRY_FILTER)),
    );
    expect(JSON.parse(p.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ["INSERT"],
      dynamodb: { Keys: { sk: { S: [{ prefix: "LOG#" }] } } },
    });
    // A batch that keeps failing goes to the function's own dead-letter queue: standard,
    // encrypted, kept as long as the stage keeps dead letters, and alarmed on.
    const deadLettersId = s.arnOf(p.DestinationConfig?.OnFailure?.Destination);
    const deadLetters = s.json.Resources[deadLettersId];
    expect(deadLetters?.Type).toBe("AWS::SQS::Queue");
    expect(deadLetters.Properties).toMatchObject({
      MessageRetentionPeriod: s.config.events.deadLetterRetentionDays * 86_400,
      SqsManagedSseEnabled: true,
    });
    expect(deadLetters.Properties.FifoQueue).toBeUndefined();
    const alarmed = s
      .ofType("AWS::CloudWatch::Alarm")
      .filter(([, a]) => a.Properties.MetricName === "ApproximateNumberOfMessagesVisible")
      .map(([, a]) => a.Properties.Dimensions?.[0]?.Value);
    expect(alarmed).toContainEqual({ "Fn::GetAtt": [deadLettersId, "QueueName"] });
    // Lambda may send there, and only there, over TLS (the queue refuses anything else).
    expect(s.grantsOf(streamId).filter((g) => g.action.startsWith("sqs:"))).toEqual([
      {
        effect: "Allow",
        action: "sqs:SendMessage",
        resource: p.DestinationConfig.OnFailure.Destination,
      },
    ]);
    const [, policy] =
      s
        .ofType("AWS::SQS::QueuePolicy")
        .find(([, q]) => q.Properties.Queues.some((ref: Json) => ref.Ref === deadLettersId)) ?? [];
    expect(JSON.stringify(policy?.Properties.PolicyDocument)).toContain("aws:SecureTransport");
    // Invoked by its mapping alone: no asynchronous invocations, so no invoke config.
    const invokeConfigs = s.ofType("AWS::Lambda::EventInvokeConfig");
    expect(invokeConfigs.some(([, c]) => c.Properties.FunctionName.Ref === streamId)).toBe(false);
  });

  it("leaves calls dispatched directly out of every tool and registered-tool rule", () => {
    const s = stageOf(stage);
    const everyEvent = new Set([RECORDER_HANDLER, SUBSCRIPTIONS_HANDLER, STREAM_HANDLER]);
    const runners = wiring.filter((r) => !everyEvent.has(r.handler));
    expect(runners.map((r) => r.handler).sort()).toEqual(DISPATCHABLE);
    for (const wired of runners) {
      const [, rule] = s.rule(wired.name) ?? [];
      expect(rule?.Properties.EventPattern.detail.dispatch, wired.name).toEqual(NOT_DIRECT);
    }
    // The stream keeps every call event, direct or not; the recorder every one whose
    // announcer did not log it itself (the same absent-or-not-direct match); the subscriptions
    // dispatcher sees every event, the catalog's too.
    const callEvents = [
      "ToolCallScheduled",
      "ToolResultReceived",
      "ToolCallApprovalRequested",
      "ToolCallProgress",
    ];
    // The stream's row: the local bus's rule (on AWS the table's change stream feeds it).
    expect(s.rule("stream")).toBeUndefined();
    expect(wiring.find((r) => r.handler === STREAM_HANDLER)?.pattern).toEqual({
      source: ["toolbus"],
      "detail-type": callEvents,
    });
    const [, recorder] = s.rule("recorder") ?? [];
    expect(recorder?.Properties.EventPattern).toEqual({
      source: ["toolbus"],
      "detail-type": callEvents,
      detail: { log: NOT_DIRECT },
    });
    const [, subscriptions] = s.rule("subscriptions") ?? [];
    expect(subscriptions?.Properties.EventPattern).toEqual({ source: ["toolbus"] });
  });

  it("lets the API's two entry points invoke exactly the tool and registered-tool functions, and nothing else invoke anything", () => {
    const s = stageOf(stage);
    for (const entry of SERVES_CALLS) {
      const invokes = s.grantsOf(s.fn(entry).id).filter((g) => g.action.startsWith("lambda:"));
      for (const grant of invokes) {
        expect(grant.effect).toBe("Allow");
        expect(grant.action).toBe("lambda:InvokeFunction");
      }
      // Each resource is a function's own unqualified ARN: no wildcard, no version or alias.
      expect(invokes.map((g) => g.resource).sort(byJson), entry).toEqual(
        DISPATCHABLE.map((handler) => ({ "Fn::GetAtt": [s.fn(handler).id, "Arn"] })).sort(byJson),
      );
    }
    expect(DISPATCHABLE).not.toContain(RECORDER_HANDLER);
    expect(DISPATCHABLE).not.toContain(SWEEPER_HANDLER);
    expect(DISPATCHABLE).not.toContain("seed");
    for (const [handler, id] of s.functions) {
      if (SERVES_CALLS.has(handler)) continue;
      expect(
        s.grantsOf(id).filter((g) => g.action.startsWith("lambda:")),
        `${handler} invokes nothing`,
      ).toEqual([]);
    }
    // Across the whole template: only the API's entry points and SST's seed runner may invoke.
    const apiRoles = [...SERVES_CALLS].map((entry) => s.roleOf(s.fn(entry).id));
    for (const [id, policy] of s.ofType("AWS::IAM::Policy")) {
      const invoking = policy.Properties.PolicyDocument.Statement.filter((st: Json) =>
        [st.Action].flat().some((action: string) => action.startsWith("lambda:")),
      );
      if (invoking.length === 0) continue;
      const roles: string[] = policy.Properties.Roles.map((ref: Json) => ref.Ref);
      expect(roles.some((role) => apiRoles.includes(role)) || id.startsWith("SeedScript"), id).toBe(
        true,
      );
    }
  });

  it("has no dependency cycle between resources (the API refers to the handlers, not back)", () => {
    const s = stageOf(stage);
    const ids = new Set(Object.keys(s.json.Resources));
    const dependencies = (resource: Json): Set<string> => {
      const found = new Set<string>([resource.DependsOn ?? []].flat());
      const visit = (value: Json): void => {
        if (Array.isArray(value)) {
          for (const item of value) visit(item);
          return;
        }
        if (typeof value === "string") {
          for (const [, id] of value.matchAll(/\$\{([A-Za-z0-9]+)[.}]/g)) if (id) found.add(id);
          return;
        }
        if (!value || typeof value !== "object") return;
        if (typeof value.Ref === "string") found.add(value.Ref);
        if (Array.isArray(value["Fn::GetAtt"])) found.add(value["Fn::GetAtt"][0]);
        for (const item of Object.values(value)) visit(item);
      };
      visit(resource.Properties);
      return new Set([...found].filter((id) => ids.has(id)));
    };
    const graph = new Map([...ids].map((id) => [id, dependencies(s.json.Resources[id])]));
    const done = new Set<string>();
    const path: string[] = [];
    const walk = (id: string): void => {
      if (done.has(id)) return;
      const at = path.indexOf(id);
      if (at >= 0) throw new Error(`dependency cycle: ${[...path.slice(at), id].join(" -> ")}`);
      path.push(id);
      for (const next of graph.get(id) ?? []) walk(next);
      path.pop();
      done.add(id);
    };
    for (const id of ids) walk(id);
    // The API's own role policy is what refers to the handlers' functions.
    const apiId = s.fn("api").id;
    for (const handler of DISPATCHABLE) {
      const { id } = s.fn(handler);
      const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
        from === to ||
        [...(graph.get(from) ?? [])].some((next) => {
          if (seen.has(next)) return false;
          seen.add(next);
          return reaches(next, to, seen);
        });
      expect(reaches(apiId, id), `api -> ${handler}`).toBe(true);
      expect(reaches(id, apiId), `${handler} -> api`).toBe(false);
    }
  });

  it("names each dispatchable handler's function in the API's environments, and no one else's", () => {
    const s = stageOf(stage);
    const { resource: stream } = s.fn("api-stream");
    const { resource: api } = s.fn("api");
    expect(stream.Properties.Environment.Variables[FUNCTIONS_ENV]).toEqual(
      api.Properties.Environment.Variables[FUNCTIONS_ENV],
    );
    const value = api.Properties.Environment.Variables[FUNCTIONS_ENV];
    // CloudFormation fills in each function's name (its Ref): here, its logical id.
    const rendered = renderRefs(value, (logicalId) => logicalId);
    if (rendered === undefined) throw new Error(`${FUNCTIONS_ENV} refers to more than names`);
    expect(JSON.parse(rendered)).toEqual(
      Object.fromEntries(DISPATCHABLE.map((handler) => [handler, s.fn(handler).id])),
    );
    // The runtime accepts it, even with the longest names CloudFormation could generate, and
    // the whole environment stays under Lambda's 4 KB.
    const longest = renderRefs(value, longestFunctionName) ?? "";
    expect(Object.keys(parseFunctions(longest)).sort()).toEqual(DISPATCHABLE);
    const variables = { ...api.Properties.Environment.Variables, [FUNCTIONS_ENV]: longest };
    const size = Object.entries(variables).reduce(
      (total, [name, v]) => total + name.length + (typeof v === "string" ? v.length : 64),
      0,
    );
    expect(size).toBeLessThan(4 * 1024);
    for (const [handler, id] of s.functions) {
      if (SERVES_CALLS.has(handler)) continue;
      const variables = s.json.Resources[id].Properties.Environment.Variables;
      expect(variables[FUNCTIONS_ENV], handler).toBeUndefined();
    }
  });

  it("gives every target a retry policy and a dead-letter queue, and every handler its own", () => {
    const s = stageOf(stage);
    const { delivery, handler, deadLetterRetentionDays } = s.config.events;
    const queues = new Map(s.ofType("AWS::SQS::Queue"));
    const queuePolicies = s.ofType("AWS::SQS::QueuePolicy");
    const invokeConfigs = s.ofType("AWS::Lambda::EventInvokeConfig");
    const seen = new Set<string>();
    for (const wired of busFed) {
      const [ruleId, rule] = s.rule(wired.name) ?? [];
      const [target] = rule?.Properties.Targets ?? [];
      expect(target.RetryPolicy).toEqual({
        MaximumRetryAttempts: delivery.retryAttempts,
        MaximumEventAgeInSeconds: delivery.maxEventAgeSeconds,
      });
      const queueId = s.arnOf(target.DeadLetterConfig?.Arn);
      const queue = queues.get(queueId);
      expect(queue, `${wired.name} dead-letter queue`).toBeDefined();
      expect(seen.has(queueId), "one queue per handler").toBe(false);
      seen.add(queueId);
      expect(queue?.Properties.MessageRetentionPeriod).toBe(deadLetterRetentionDays * 86_400);
      expect(queue?.Properties.SqsManagedSseEnabled).toBe(true);
      // EventBridge may send to the queue, and only for this rule.
      const policy = queuePolicies.find(([, p]) =>
        p.Properties.Queues.some((q: Json) => q.Ref === queueId),
      );
      expect(policy?.[1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Action: "sqs:SendMessage",
          Principal: { Service: "events.amazonaws.com" },
          Condition: { ArnEquals: { "aws:SourceArn": { "Fn::GetAtt": [ruleId, "Arn"] } } },
        }),
      );
      const functionId = s.fn(wired.handler).id;
      // A handler that accepted the event and failed: Lambda retries, then the same queue.
      const invoke = invokeConfigs.find(([, c]) => c.Properties.FunctionName.Ref === functionId);
      expect(invoke?.[1].Properties).toMatchObject({
        MaximumRetryAttempts: handler.retryAttempts,
        MaximumEventAgeInSeconds: handler.maxEventAgeSeconds,
        DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queueId, "Arn"] } } },
      });
    }
    expect(invokeConfigs).toHaveLength(busFed.length);
    // The stream's function has its own queue too: its event source's on-failure destination.
    for (const wired of wiring.filter((r) => !fedByBus(r))) {
      const queueId = s.onFailureOf(s.fn(wired.handler).id);
      expect(queues.get(queueId)?.Properties, wired.handler).toMatchObject({
        MessageRetentionPeriod: deadLetterRetentionDays * 86_400,
        SqsManagedSseEnabled: true,
      });
      expect(seen.has(queueId), "one queue per handler").toBe(false);
      seen.add(queueId);
    }
    // And no queue but those: a dead-letter queue per handler of the wiring table.
    expect(seen.size).toBe(wiring.length);
    expect(queues.size).toBe(wiring.length);
  });

  it("routes scheduled calls of registered http and mcp tools to one handler per kind, each with its own dead letters", () => {
    const s = stageOf(stage);
    const { delivery, handler } = s.config.events;
    expect(wiring.filter((r) => isRegisteredHandler(r.handler)).map((r) => r.name)).toEqual(
      REGISTERED.map((e) => e.rule),
    );
    const queueIds = new Set<string>();
    for (const registered of REGISTERED) {
      const found = s.rule(registered.rule);
      if (!found) throw new Error(`no rule ${registered.rule}`);
      const [, rule] = found;
      expect(rule.Properties.EventBusName).toEqual({ Ref: s.busId });
      // Routed on the implementation kind: no rule per registered tool, so no deploy per tool.
      // A call dispatched directly to its handler is announced too; the rule leaves it alone.
      expect(rule.Properties.EventPattern).toEqual({
        source: ["toolbus"],
        "detail-type": ["ToolCallScheduled"],
        detail: {
          implementation: [registered.kind],
          dispatch: [{ exists: false }, { "anything-but": "direct" }],
        },
      });
      const { id: functionId, resource: fn } = s.fn(registered.handler);
      expect(rule.Properties.Targets).toHaveLength(1);
      const [target] = rule.Properties.Targets;
      expect(target.Id).toBe("handler");
      expect(target.Arn).toEqual({ "Fn::GetAtt": [functionId, "Arn"] });
      expect(target.RetryPolicy).toEqual({
        MaximumRetryAttempts: delivery.retryAttempts,
        MaximumEventAgeInSeconds: delivery.maxEventAgeSeconds,
      });
      const queueId = s.arnOf(target.DeadLetterConfig?.Arn);
      expect(s.json.Resources[queueId]?.Type, registered.rule).toBe("AWS::SQS::Queue");
      queueIds.add(queueId);
      // Accepted and then failed: Lambda's retries, then the same queue.
      const invoke = s
        .ofType("AWS::Lambda::EventInvokeConfig")
        .find(([, c]) => c.Properties.FunctionName.Ref === functionId);
      expect(invoke?.[1].Properties).toMatchObject({
        MaximumRetryAttempts: handler.retryAttempts,
        MaximumEventAgeInSeconds: handler.maxEventAgeSeconds,
        DestinationConfig: { OnFailure: { Destination: { "Fn::GetAtt": [queueId, "Arn"] } } },
      });
      expect(s.result.bundles.has(`functions/${registered.handler}`)).toBe(true);
      expect(fn.Properties.MemorySize).toBe(s.config.functions.tool.memoryMB);
      expect(fn.Properties.Timeout).toBe(s.config.functions.tool.timeoutSeconds);
      // No tool's secret bound (registrations name theirs after the deploy), only the stage's
      // connection providers' client secrets; and what the runtime needs to find any secret
      // of this stage in SSM.
      const env = fn.Properties.Environment.Variables;
      expect(boundSecretNames(env)).toEqual(PROVIDER_SECRETS[stage]);
      expect(env).toMatchObject({
        SST_APP: "toolbus",
        SST_STAGE: stage,
        SST_SSM_PREFIX: `/sst/toolbus/${stage}/`,
      });
    }
    expect(queueIds.size, "a queue per kind").toBe(REGISTERED.length);
  });

  it("runs the sweeper on its schedule from the default bus", () => {
    for (const stage of ["dev", "prod"] as const) {
      const s = stageOf(stage);
      expect(s.schedules.map(([, r]) => r.Properties.ScheduleExpression)).toEqual(
        SCHEDULED_JOBS.map((job) => job.schedule),
      );
      const [, schedule] = s.schedules[0] ?? [];
      expect(schedule?.Properties.EventBusName).toBeUndefined();
      expect(schedule?.Properties.Targets?.[0]?.Arn).toEqual({
        "Fn::GetAtt": [s.fn(SWEEPER_HANDLER).id, "Arn"],
      });
    }
  });

  it("keeps the subscriptions rule ENABLED in its template, and names it to the API and the sweeper alone, who alone may switch it", () => {
    const s = stageOf(stage);
    const found = s.rule(SUBSCRIPTIONS_RULE);
    if (!found) throw new Error(`no rule ${SUBSCRIPTIONS_RULE}`);
    const [ruleId, rule] = found;
    // Switched at run time; a template that said DISABLED would switch off existing
    // subscriptions' deliveries whenever an update touched the rule.
    expect(rule.Properties.State).toBe("ENABLED");
    for (const [, other] of s.rules) expect(other.Properties.State).toBe("ENABLED");
    const switchers = new Set<string>();
    for (const [handler, id] of s.functions) {
      const variables = s.json.Resources[id].Properties.Environment.Variables;
      const switches = s
        .grantsOf(id)
        .filter((grant) => /^events:(Describe|Enable|Disable)Rule$/.test(grant.action));
      if (variables.TOOLBUS_SUBSCRIPTIONS_RULE === undefined) {
        expect(switches, handler).toEqual([]);
        continue;
      }
      switchers.add(handler);
      // The rule's own name: its Ref would be "bus|rule" on a custom bus.
      expect(variables.TOOLBUS_SUBSCRIPTIONS_RULE, handler).toBe(rule.Properties.Name);
      expect(switches.length, handler).toBeGreaterThan(0);
      for (const grant of switches) {
        expect(grant, handler).toMatchObject({
          effect: "Allow",
          resource: { "Fn::GetAtt": [ruleId, "Arn"] },
        });
      }
    }
    expect([...switchers].sort()).toEqual(["api", SWEEPER_HANDLER]);
  });

  it("runs every function of ours on nodejs24.x and arm64, sized and logged as the stage says", () => {
    const s = stageOf(stage);
    expect(LAMBDA_RUNTIME).toBe("nodejs24.x");
    const ours = new Set(s.functions.values());
    const others = s.ofType("AWS::Lambda::Function").filter(([id]) => !ours.has(id));
    for (const id of ours) expect(s.json.Resources[id].Properties.Runtime, id).toBe("nodejs24.x");
    // The rest are SST's deploy-time handlers (its custom resources, the seed's Script).
    expect(others.map(([id]) => id.replace(/[0-9A-F]{8}$/, "")).sort()).toEqual([
      "CustomResourceHandler",
      "SeedScriptScriptHandler",
    ]);
    const sizes = s.config.functions;
    const sizeOf = (handler: string) =>
      handler === "api"
        ? sizes.api
        : handler === "api-stream"
          ? sizes.streaming
          : handler === "seed"
            ? sizes.seed
            : handler === "recorder" || handler === SWEEPER_HANDLER || handler === STREAM_HANDLER
              ? sizes.recorder
              : sizes.tool;
    expect([...s.functions.keys()].sort()).toEqual(
      [
        "api",
        "api-stream",
        "seed",
        SWEEPER_HANDLER,
        DELIVERIES_HANDLER,
        ...wiring.map((r) => r.handler),
      ].sort(),
    );
    for (const [handler, id] of s.functions) {
      const p = s.json.Resources[id].Properties;
      expect(p.Architectures, handler).toEqual(["arm64"]);
      expect(p.MemorySize, handler).toBe(sizeOf(handler).memoryMB);
      expect(p.Timeout, handler).toBe(sizeOf(handler).timeoutSeconds);
      if (s.config.tracing === "disabled") expect(p.TracingConfig).toBeUndefined();
      else expect(p.TracingConfig).toEqual({ Mode: "Active" });
      const logGroupId = p.LoggingConfig?.LogGroup?.Ref;
      // JSON lines, and none of Lambda's own START/END/REPORT lines (INFO-level system logs).
      expect(p.LoggingConfig, handler).toMatchObject({ LogFormat: "JSON", SystemLogLevel: "WARN" });
      const logGroup = s.json.Resources[logGroupId];
      expect(logGroup?.Type, handler).toBe("AWS::Logs::LogGroup");
      expect(logGroup.Properties.RetentionInDays).toBe(s.config.logs.retentionDays);
      expect(logGroup.DeletionPolicy).toBe(stage === "prod" ? "Retain" : "Delete");
    }
  });

  it("hands every function the stage's validated config, table and bus", () => {
    const s = stageOf(stage);
    for (const [handler, id] of s.functions) {
      const variables = s.json.Resources[id].Properties.Environment.Variables;
      expect(variables.TOOLBUS_TABLE, handler).toEqual({ Ref: s.tableId });
      expect(variables.TOOLBUS_BUS, handler).toEqual({ Ref: s.busId });
      const config = parseStageConfig(JSON.parse(variables.TOOLBUS_CONFIG));
      expect(config).toEqual(s.config.toolbus);
      expect(config.stage).toBe(stage);
      // Lambda's limit on a function's whole environment.
      expect(JSON.stringify(variables).length, handler).toBeLessThan(4 * 1024);
    }
  });

  it("bundles each function minified, as ESM, with the AWS SDK inside", () => {
    const s = stageOf(stage);
    expect([...s.result.bundles.keys()].sort()).toEqual(
      [...s.functions.keys()].map((handler) => `functions/${handler}`).sort(),
    );
    for (const handler of s.functions.keys()) {
      const code = bundleCode(s, handler);
      // Bundled, not imported from the runtime's copy: only the credential providers Lambda
      // never reaches (its credentials are environment variables) are left to the runtime.
      const fromRuntime = [...code.matchAll(/(?:from|import\()\s*["'](@aws-sdk\/[^"']+)["']/g)].map(
        (match) => match[1],
      );
      expect(new Set(fromRuntime), handler).toEqual(new Set(UNUSED_CREDENTIAL_PROVIDERS));
      expect(code, handler).toContain("DynamoDBClient");
      // Only the API's entry points dispatch (core's ./dispatch subpath): no other bundle
      // carries Lambda's client.
      expect(code.includes("/2015-03-31/functions/"), `${handler}: Lambda's Invoke`).toBe(
        SERVES_CALLS.has(handler),
      );
      // Minified: about two thousand characters a line (newlines survive only inside strings,
      // and the API's prompt texts hold a few dozen), where unminified code has ~40.
      expect(code.length / code.split("\n").length, handler).toBeGreaterThan(1000);
    }
  });

  it("bundles the MCP SDK without Ajv, its default checker, which our code never uses", () => {
    const s = stageOf(stage);
    for (const handler of s.functions.keys()) {
      // An option name of Ajv's, kept by minification as every property name is.
      expect(artifactCode(s, handler).includes("strictSchema"), handler).toBe(false);
    }
    // The stub in its place, which says what to do should anything construct it (in the
    // API, in the chunks of /mcp and of registrations).
    for (const handler of ["api", "registered/mcp", "seed"]) {
      expect(artifactCode(s, handler), handler).toContain("validator is not bundled");
    }
  });

  it("keeps what each function loads on a cold start within its budget, and a function over budget under its ceiling", () => {
    const s = stageOf(stage);
    const sizes: Record<string, string> = {};
    for (const handler of s.functions.keys()) {
      const bytes = bundleSizes(bundleEntry(s, handler));
      const kb = bytes.coldStart / 1024;
      sizes[handler] =
        bytes.lazy > 0
          ? `${Math.round(kb)} (+${Math.round(bytes.lazy / 1024)} lazy)`
          : `${Math.round(kb)}`;
      const over = OVER_BUDGET[handler];
      if (over) {
        // Still over (else the entry goes), and no bigger than when it was written down.
        expect
          .soft(kb, `${handler} fits its budget now: remove it from OVER_BUDGET`)
          .toBeGreaterThan(bundleBudgetKB(handler));
        expect.soft(kb, `${handler} (${over.blockedBy})`).toBeLessThanOrEqual(over.ceilingKB);
      } else {
        expect.soft(kb, handler).toBeLessThanOrEqual(bundleBudgetKB(handler));
      }
    }
    for (const handler of Object.keys(OVER_BUDGET)) expect(s.functions.has(handler)).toBe(true);
    console.log(
      `${stage} cold-start sizes (KB): ${Object.entries(sizes)
        .map(([h, size]) => `${h} ${size}`)
        .join(", ")}`,
    );
  });

  it("splits only the API, the seed and the functions using connected accounts into chunks, and loads rare paths' code lazily", () => {
    const s = stageOf(stage);
    for (const handler of s.functions.keys()) {
      const { lazy } = bundleSizes(bundleEntry(s, handler));
      expect(lazy > 0, handler).toBe(SPLIT_HANDLERS.has(handler));
    }
    // What only rare paths need stays out of a cold start, but in the bundle: the MCP SDK's
    // server (/mcp), the YAML serializer (agent files), the tools' parsers (npm start), the
    // console's script and stylesheet (/console).
    const api = bundleCode(s, "api");
    const all = artifactCode(s, "api");
    for (const rare of [
      "WebStandardStreamableHTTPServerTransport",
      "lineWidth",
      "ICAL",
      "XMLParser",
      "visually-hidden",
    ]) {
      expect(api, rare).not.toContain(rare);
      expect(all, rare).toContain(rare);
    }
  });

  it("carries the SSM client only in functions that read secrets", () => {
    const s = stageOf(stage);
    for (const handler of s.functions.keys()) {
      // Bound secrets are read on the first event; registered tools read the stage's by name.
      const readsSecrets =
        expectedSecrets(handler, stage).length > 0 || isRegisteredHandler(handler);
      expect(bundleCode(s, handler).includes("AmazonSSM.GetParameters"), handler).toBe(
        readsSecrets,
      );
    }
    expect(bundleCode(s, "recorder")).not.toContain("AmazonSSM.GetParameters");
    expect(bundleCode(s, "tools/github_api")).toContain("AmazonSSM.GetParameters");
  });

  it("carries the KMS client only in functions granted the connections key", () => {
    const s = stageOf(stage);
    // KMS's JSON protocol names its service in every request (`TrentService.Decrypt`). A
    // function without the key would only be refused by KMS, so its code has no use there; a
    // tool's single-file bundle cannot keep a dynamic import out of its cold start either.
    const carrying = [...s.functions.keys()].filter((handler) =>
      artifactCode(s, handler).includes("TrentService"),
    );
    expect(
      carrying.filter((handler) => !USES_CONNECTIONS.has(handler) && handler !== "seed"),
    ).toEqual([]);
    // Where it is carried, it loads with the first connection used: never on a cold start.
    for (const handler of s.functions.keys()) {
      expect(bundleCode(s, handler).includes("TrentService"), handler).toBe(false);
    }
    expect(carrying).toContain("tools/github_api");
  });

  it("carries the outbound client (the SSRF guard) only in functions that reach the network", () => {
    const s = stageOf(stage);
    // Tools that compute from their input and settings; test/offline-tools.test.ts runs them
    // with a client that refuses every request.
    const offline = new Set(["tools/readability_analyzer", "tools/static_links"]);
    for (const handler of s.functions.keys()) {
      const reaches = handler.startsWith("tools/")
        ? !offline.has(handler)
        : isRegisteredHandler(handler) ||
          // The streaming endpoint is built from the API's code, registration checks included,
          // though it serves no registration route.
          ["api", "api-stream", "seed", SUBSCRIPTIONS_HANDLER, DELIVERIES_HANDLER].includes(
            handler,
          );
      expect(bundleCode(s, handler).includes("cloud metadata"), handler).toBe(reaches);
    }
  });

  it("has a dashboard and alarms on dead letters, handler error rates, API 5xx and the stream's lag", () => {
    const s = stageOf(stage);
    const [, dashboard] = s.only("AWS::CloudWatch::Dashboard");
    expect(dashboard.Properties.DashboardName).toBe(`toolbus-${stage}`);
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const shown of ["calls", "duration", "cacheHits", "Dead letters", "API 5xx"]) {
      expect(body, shown).toContain(shown);
    }
    const alarms = s.ofType("AWS::CloudWatch::Alarm").map(([, alarm]) => alarm.Properties);
    const queues = s.ofType("AWS::SQS::Queue");
    const onQueues = alarms.filter((a) => a.MetricName === "ApproximateNumberOfMessagesVisible");
    // Every queue is a dead-letter queue, and alarms on a letter.
    expect(onQueues.map((a) => a.Dimensions[0].Value["Fn::GetAtt"][0]).sort()).toEqual(
      queues.map(([id]) => id).sort(),
    );
    expect(alarms.some((a) => a.MetricName === "ApproximateAgeOfOldestMessage")).toBe(false);
    // The stream's function when it falls five minutes behind the table's change stream.
    const behind = alarms.filter((a) => a.MetricName === "IteratorAge");
    expect(behind.map((a) => a.Dimensions)).toEqual([
      [{ Name: "FunctionName", Value: { Ref: s.fn(STREAM_HANDLER).id } }],
    ]);
    expect(BACKLOG_ALARM_SECONDS).toBe(300);
    expect(behind[0]).toMatchObject({
      Namespace: "AWS/Lambda",
      Statistic: "Maximum",
      Period: 300,
      Threshold: 300_000,
      ComparisonOperator: "GreaterThanThreshold",
      TreatMissingData: "notBreaching",
    });
    // A dead-letter queue per wiring-table handler (12), an error rate per function but the
    // seed's (16), the API's 5xx and the stream's lag: 30. 31 while a FIFO queue fed the
    // stream, whose own dead letters alarmed too.
    expect(alarms).toHaveLength(queues.length + (s.functions.size - 1) + 1 + behind.length);
    expect(alarms).toHaveLength(30);
    for (const alarm of onQueues) {
      expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
    }
    // Every function but the deploy-time seed: an error-rate alarm each.
    const errorRates = alarms.filter((a) => JSON.stringify(a.Metrics ?? "").includes("errors"));
    expect(new Set(errorRates.map((a) => String(a.AlarmDescription).split(" ")[2]))).toEqual(
      new Set([...s.functions.keys()].filter((handler) => handler !== "seed")),
    );
    expect(alarms.some((a) => a.MetricName === "5xx" || a.MetricName === "5XXError")).toBe(true);
  });

  it("binds each secret only to the functions that need it", () => {
    const s = stageOf(stage);
    const secretIds = [...new Set(TOOL_SECRET_NAMES)];
    expect(ALL_SECRETS).toEqual([
      "GITHUB_TOKEN",
      "GOOGLE_CALENDAR_CREDENTIALS",
      "SEARCH_API_KEY",
      "TOOLBUS_ADMIN_KEY",
    ]);
    expect(secretIds).not.toContain(ADMIN_KEY_SECRET);
    for (const [id, fn] of s.ofType("AWS::Lambda::Function")) {
      const variables: Record<string, unknown> = fn.Properties.Environment?.Variables ?? {};
      const handler = [...s.functions].find(([, fnId]) => fnId === id)?.[0];
      const bound = Object.keys(variables).filter((name) => name.startsWith("SST_Secret_value_"));
      if (!handler) {
        expect(bound, `${id} (not ours) gets no secret`).toEqual([]);
        continue;
      }
      // What the runtime will detect on AWS is exactly what the stack bound.
      const env = Object.fromEntries(
        Object.entries(variables).filter(([, v]) => typeof v === "string"),
      ) as NodeJS.ProcessEnv;
      expect(boundSecretNames(env), handler).toEqual(expectedSecrets(handler, stage));
      for (const name of bound) expect(variables[name]).toBe(SST_SECRET_PLACEHOLDER);
      expect(env.SST_SSM_PREFIX).toBe(`/sst/toolbus/${stage}/`);
    }
    expect(boundSecretNames({})).toEqual([]);
    expect(ownSecrets("tools/github_api")).toEqual(["GITHUB_TOKEN"]);
    expect(ownSecrets("tools/web_search")).toEqual(["SEARCH_API_KEY"]);
    expect(ownSecrets("tools/calendar")).toEqual(["GOOGLE_CALENDAR_CREDENTIALS"]);
    expect(ownSecrets("recorder")).toEqual([]);
  });

  it("binds the connection providers' client secrets to exactly the functions that use connected accounts", () => {
    const s = stageOf(stage);
    // The stack binds what the stage's config names: prod's providers, none on dev.
    expect(providerSecretNames(s.config.toolbus)).toEqual(PROVIDER_SECRETS[stage]);
    const holders = new Map<string, string[]>();
    for (const [handler, id] of s.functions) {
      const variables = s.json.Resources[id].Properties.Environment.Variables;
      const env = Object.fromEntries(
        Object.entries(variables).filter(([, v]) => typeof v === "string"),
      ) as NodeJS.ProcessEnv;
      const readable = parametersReadable(s, id);
      for (const secret of PROVIDER_SECRETS[stage]) {
        // A provider's secret that a tool reads too (GITHUB_TOKEN) stays its tool's as well.
        const binds = USES_CONNECTIONS.has(handler) || ownSecrets(handler).includes(secret);
        // SST's binding: the variable the runtime finds it by, and its two parameters' grant.
        expect(boundSecretNames(env).includes(secret), `${handler} binds ${secret}`).toBe(binds);
        const paths = secretParameterNames(secret, env);
        expect(readable(paths.stage), `${handler} reads ${secret}`).toBe(binds);
        expect(readable(paths.fallback), `${handler} reads ${secret}`).toBe(binds);
        if (binds) holders.set(secret, [...(holders.get(secret) ?? []), handler]);
      }
    }
    const six = [...USES_CONNECTIONS].sort();
    expect(six).toEqual([
      "api",
      "api-stream",
      "registered/http",
      "registered/mcp",
      "tools/calendar",
      "tools/github_api",
    ]);
    if (stage === "dev") {
      expect(holders.size).toBe(0);
      return;
    }
    // Named by a provider alone: the six functions, and no other.
    expect(holders.get("GITHUB_OAUTH_SECRET")?.sort()).toEqual(six);
    expect(holders.get("GOOGLE_OAUTH_SECRET")?.sort()).toEqual(six);
    // Named by a provider and by github_api: the six, and the seed that refreshes capabilities.
    expect(holders.get("GITHUB_TOKEN")?.sort()).toEqual([...six, "seed"].sort());
    // Not the deploy-time seed, the recorder, the stream or another tool: named, and not bound.
    for (const handler of ["seed", RECORDER_HANDLER, STREAM_HANDLER, "tools/web_search"]) {
      expect(holders.get("GITHUB_OAUTH_SECRET"), handler).not.toContain(handler);
    }
  });

  it("grants each function only its own table actions, bus, secrets, logs and queue", () => {
    const s = stageOf(stage);
    const tracing = s.config.tracing !== "disabled";
    const handlerOf = new Map([...s.functions].map(([handler, id]) => [id, handler]));
    for (const [handler, functionId] of s.functions) {
      const fnProps = s.json.Resources[functionId].Properties;
      const roleId = s.roleOf(functionId);
      const role = s.json.Resources[roleId];
      expect(role.Properties.ManagedPolicyArns, `${handler}: no managed policy`).toBeUndefined();
      expect(role.Properties.Policies, `${handler}: no inline role policy`).toBeUndefined();
      const env = fnProps.Environment.Variables;
      const logGroupId = fnProps.LoggingConfig.LogGroup.Ref;
      const deadLetterId = s.onFailureOf(functionId);
      const name = (resource: Json): string => {
        if (resource === "*") return "*";
        const arnId = s.arnOf(resource);
        if (arnId === s.tableId) return "table";
        if (s.isTableStream(resource)) return "table-stream";
        if (arnId === s.busId) return "bus";
        if (arnId && arnId === s.rule(SUBSCRIPTIONS_RULE)?.[0]) return "subscriptions-rule";
        if (arnId === s.keyId) return "connections-key";
        if (arnId && arnId === logGroupId) return "own-logs";
        if (arnId && arnId === deadLetterId) return "own-dead-letters";
        if (arnId && handlerOf.has(arnId)) return `function:${handlerOf.get(arnId)}`;
        const joined = resource?.["Fn::Join"]?.[1];
        if (Array.isArray(joined)) {
          if (s.arnOf(joined[0]) === s.tableId) return String(joined[1]).replace(/^\//, "");
          const text = joined.filter((part: Json) => typeof part === "string").join("");
          for (const secret of [...stageSecrets(stage), `${REGISTERED_SECRET_PREFIX}*`]) {
            const paths = secretParameterNames(secret, env);
            if (text.endsWith(`:parameter${paths.stage}`)) return `secret:${secret}`;
            if (text.endsWith(`:parameter${paths.fallback}`)) return `secret-fallback:${secret}`;
          }
        }
        return `unexpected ${JSON.stringify(resource)}`;
      };
      const statements: Json[] = s
        .policiesOf(roleId)
        .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement);
      const linesOf = (effect: string) =>
        statements
          .filter((statement) => statement.Effect === effect)
          .flatMap((statement) => {
            const actions = [statement.Action].flat();
            const resources = [statement.Resource].flat();
            return actions.flatMap((action: string) =>
              resources.map((resource: Json) => `${action} ${name(resource)}`),
            );
          });
      for (const statement of statements) expect(["Allow", "Deny"]).toContain(statement.Effect);
      expect([...new Set(linesOf("Allow"))].sort(), handler).toEqual(
        expectedAccess(handler, stage, tracing),
      );
      // The one Deny: connected accounts' items, for every function that does not use them.
      expect([...new Set(linesOf("Deny"))].sort(), handler).toEqual(expectedDenied(handler));
    }
  });

  /** Which SSM parameters (by name) a function may read, from its role's policies. */
  function parametersReadable(s: ReturnType<typeof stageOf>, functionId: string) {
    const grants = s.grantsOf(functionId).filter((g) => g.action.startsWith("ssm:"));
    for (const grant of grants) {
      expect(grant.effect).toBe("Allow");
      expect(grant.action).toBe("ssm:GetParameters");
      expect(grant.resource, "no `*` resource").not.toBe("*");
    }
    const patterns = grants.map((g) => renderArn(g.resource) ?? "unresolved");
    return (name: string) => patterns.some((pattern) => iamMatches(pattern, parameterArn(name)));
  }

  /**
   * A secret named after the deploy is readable, this stage's and the fallback, when it is under
   * the registrations' prefix; the admin key and the built-in tools' secrets never are.
   */
  function expectRegisteredSecretsReadable(s: ReturnType<typeof stageOf>, handler: string) {
    const { id, resource } = s.fn(handler);
    const readable = parametersReadable(s, id);
    const env = resource.Properties.Environment.Variables;
    const name = `${REGISTERED_SECRET_PREFIX}ACME_TOKEN`;
    // Exactly where the runtime (readStageSecrets) looks for a secret registered today...
    const paths = secretParameterNames(name, env);
    expect(paths.stage, handler).toBe(`/sst/toolbus/${stage}/Secret/${name}/value`);
    expect(readable(paths.stage), handler).toBe(true);
    expect(readable(paths.fallback), handler).toBe(true);
    // ...and not another stage's secrets, another app's, or SST's other parameters...
    const other = stage === "dev" ? "prod" : "dev";
    expect(readable(`/sst/toolbus/${other}/Secret/${name}/value`), handler).toBe(false);
    expect(readable(`/sst/other/${stage}/Secret/${name}/value`), handler).toBe(false);
    expect(readable(`/sst/toolbus/${stage}/Parameter/ACME/value`), handler).toBe(false);
    expect(readable(`/sst/toolbus/${stage}/Secret/${name}/other`), handler).toBe(false);
    // ...nor, through that grant, a secret outside the prefix: the admin key, a tool's, any other.
    for (const secret of [...stageSecrets(stage), "ACME_TOKEN", "TOOLSETX"]) {
      if (expectedSecrets(handler, stage).includes(secret)) continue;
      const { stage: own, fallback } = secretParameterNames(secret, env);
      expect(readable(own), `${handler} reads ${secret}`).toBe(false);
      expect(readable(fallback), `${handler} reads ${secret}`).toBe(false);
    }
  }

  it("lets the registered-tool handlers read only the secrets registrations may name and the providers' client secrets, and never delete", () => {
    const s = stageOf(stage);
    for (const { handler } of REGISTERED) {
      const { id } = s.fn(handler);
      const ssm = s.grantsOf(id).filter((g) => g.action.startsWith("ssm:"));
      // Beside the connection providers' client secrets, bound to it by name (see above).
      expect(ssm.map((g) => renderArn(g.resource)).sort(), handler).toEqual(
        [`${REGISTERED_SECRET_PREFIX}*`, ...PROVIDER_SECRETS[stage]]
          .flatMap((name) => [
            parameterArn(`/sst/toolbus/${stage}/Secret/${name}/value`),
            parameterArn(`/sst/toolbus/.fallback/Secret/${name}/value`),
          ])
          .sort(),
      );
      expectRegisteredSecretsReadable(s, handler);
      const actions = s
        .grantsOf(id)
        .filter((g) => g.effect === "Allow")
        .map((g) => g.action);
      expect(actions, handler).not.toContain("dynamodb:DeleteItem");
      expect(actions, handler).not.toContain("dynamodb:BatchWriteItem");
    }
    // No built-in secret sits under the prefix, where registrations could name it.
    for (const secret of stageSecrets(stage))
      expect(secret.startsWith(REGISTERED_SECRET_PREFIX)).toBe(false);
  });

  it("lets only the API delete, to remove a registered toolset in one transaction, and the stream's writer take back its own chunk", () => {
    const s = stageOf(stage);
    const table = { "Fn::GetAtt": [s.tableId, "Arn"] };
    const grants = s.grantsOf(s.fn("api").id);
    // IAM authorizes each item of a TransactWriteItems as its own action: Put and Delete here.
    for (const action of ["dynamodb:PutItem", "dynamodb:DeleteItem"]) {
      expect(grants).toContainEqual({ effect: "Allow", action, resource: table });
    }
    const deleters: string[] = [];
    for (const [handler, id] of s.functions) {
      if (handler === "api") continue;
      const deletes = s
        .grantsOf(id)
        .filter((g) => g.effect === "Allow" && g.action === "dynamodb:DeleteItem");
      if (deletes.length > 0) deleters.push(handler);
      // The stream's writer deletes the chunk it put when another writer moved the head first
      // (several shards, several invocations at once): the table itself, no index, and
      // connected accounts' items denied it as every other function without them.
      if (handler === STREAM_HANDLER) {
        expect(deletes, handler).toEqual([
          { effect: "Allow", action: "dynamodb:DeleteItem", resource: table },
        ]);
      }
    }
    expect(deleters).toEqual([STREAM_HANDLER]);
  });

  it("lets the API and the seed read the secrets registered toolsets name, to check and refresh them", () => {
    const s = stageOf(stage);
    expectRegisteredSecretsReadable(s, "api");
    expectRegisteredSecretsReadable(s, "seed");
    // The streaming endpoint checks and refreshes nothing: it reads the admin key alone.
    const streamReads = parametersReadable(s, s.fn("api-stream").id);
    const streamEnv = s.fn("api-stream").resource.Properties.Environment.Variables;
    expect(streamReads(secretParameterNames(`${REGISTERED_SECRET_PREFIX}X`, streamEnv).stage)).toBe(
      false,
    );
    // The seed finds those secrets by listing the catalog: gsi1 only, not the table or gsi2.
    const queries = s
      .grantsOf(s.fn("seed").id)
      .filter((g) => g.effect === "Allow" && g.action === "dynamodb:Query")
      .map((g) => g.resource);
    expect(queries).toEqual([
      { "Fn::Join": ["", [{ "Fn::GetAtt": [s.tableId, "Arn"] }, "/index/gsi1"]] },
    ]);
  });

  it("uses no wildcard action anywhere, and `*` resources only where AWS requires them", () => {
    const s = stageOf(stage);
    const ours = new Set([...s.functions.values()].map((id) => s.roleOf(id)));
    for (const [id, policy] of s.ofType("AWS::IAM::Policy")) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const actions: string[] = [statement.Action].flat();
        for (const action of actions) expect(action, id).not.toMatch(/(^|:)\*$/);
        if ([statement.Resource].flat().includes("*")) {
          for (const action of actions) expect(STAR_RESOURCE_ACTIONS, id).toContain(action);
        }
      }
    }
    // SST's own deploy-time functions (the stack's custom-resource handler and the Script's
    // runner) keep CDK's default role: AWSLambdaBasicExecutionRole (logs on `*`). SST builds
    // them; they never see a request. Everything else has no managed policy at all.
    for (const [id, role] of s.ofType("AWS::IAM::Role")) {
      if (ours.has(id)) continue;
      expect(id).toMatch(/^(CustomResourceHandlerServiceRole|SeedScriptScriptHandlerServiceRole)/);
      expect(JSON.stringify(role.Properties.ManagedPolicyArns)).toContain(
        "service-role/AWSLambdaBasicExecutionRole",
      );
    }
    // The Script's runner: read its own stack's status, invoke the seed function.
    const runner = s.ofType("AWS::IAM::Policy").filter(([id]) => id.startsWith("SeedScript"));
    expect(runner).toHaveLength(1);
    const seedId = s.fn("seed").id;
    expect(runner[0]?.[1].Properties.PolicyDocument.Statement).toEqual([
      {
        Action: "cloudformation:DescribeStacks",
        Effect: "Allow",
        Resource: { Ref: "AWS::StackId" },
      },
      {
        Action: "lambda:InvokeFunction",
        Effect: "Allow",
        Resource: [
          { "Fn::GetAtt": [seedId, "Arn"] },
          { "Fn::Join": ["", [{ "Fn::GetAtt": [seedId, "Arn"] }, ":*"]] },
        ],
      },
    ]);
  });

  it("serves every path from the API function through one HTTP API route", () => {
    const s = stageOf(stage);
    const [apiId, api] = s.only("AWS::ApiGatewayV2::Api");
    expect(api.Properties.ProtocolType).toBe("HTTP");
    expect(api.Properties.CorsConfiguration).toBeUndefined();
    const [, route] = s.only("AWS::ApiGatewayV2::Route");
    expect(route.Properties.RouteKey).toBe("$default");
    const [integrationId, integration] = s.only("AWS::ApiGatewayV2::Integration");
    expect(route.Properties.Target).toEqual({
      "Fn::Join": ["", ["integrations/", { Ref: integrationId }]],
    });
    expect(integration.Properties.IntegrationUri).toEqual({
      "Fn::GetAtt": [s.fn("api").id, "Arn"],
    });
    expect(integration.Properties.PayloadFormatVersion).toBe("2.0");
    const [, apiStage] = s.only("AWS::ApiGatewayV2::Stage");
    expect(apiStage.Properties.ApiId).toEqual({ Ref: apiId });
    expect(apiStage.Properties.DefaultRouteSettings).toEqual({
      ThrottlingBurstLimit: s.config.api.throttle.burst,
      ThrottlingRateLimit: s.config.api.throttle.rate,
    });
    const accessLogs =
      s.json.Resources[s.arnOf(apiStage.Properties.AccessLogSettings.DestinationArn)];
    expect(accessLogs.Properties.RetentionInDays).toBe(s.config.logs.retentionDays);
  });

  it("seeds the catalog with the seed function on every create and update", () => {
    const s = stageOf(stage);
    const [, script] = s.only("Custom::SSTScript");
    const seed = { Ref: s.fn("seed").id };
    expect(script.Properties.UserCreateFunction).toEqual(seed);
    expect(script.Properties.UserUpdateFunction).toEqual(seed);
    expect(script.Properties.UserDeleteFunction).toBeUndefined();
  });

  it("outputs the API and streaming URLs, the dashboard, the bus name and ARN, and the table name", () => {
    const s = stageOf(stage);
    const [apiId] = s.only("AWS::ApiGatewayV2::Api");
    const [urlId] = s.only("AWS::Lambda::Url");
    const domain = s.config.api.domain;
    if (domain) {
      // The custom domain is the API's URL; DNS points at the regional target it outputs.
      expect(s.json.Outputs.ApiUrl.Value).toBe(`https://${domain.name}`);
      const [domainId, apiDomain] = s.only("AWS::ApiGatewayV2::DomainName");
      expect(apiDomain.Properties).toMatchObject({
        DomainName: domain.name,
        DomainNameConfigurations: [{ CertificateArn: domain.certificateArn }],
      });
      expect(s.json.Outputs.ApiDomainTarget.Value).toEqual({
        "Fn::GetAtt": [domainId, "RegionalDomainName"],
      });
      expect(s.json.Outputs.ApiGatewayUrl.Value).toEqual({ "Fn::GetAtt": [apiId, "ApiEndpoint"] });
    } else {
      expect(s.json.Outputs.ApiUrl.Value).toEqual({ "Fn::GetAtt": [apiId, "ApiEndpoint"] });
      expect(s.ofType("AWS::ApiGatewayV2::DomainName")).toEqual([]);
    }
    expect(s.json.Outputs.StreamUrl.Value).toEqual({ "Fn::GetAtt": [urlId, "FunctionUrl"] });
    const [dashboardId] = s.only("AWS::CloudWatch::Dashboard");
    expect(s.json.Outputs.Dashboard.Value).toEqual({ Ref: dashboardId });
    expect(s.json.Outputs.BusName.Value).toEqual({ Ref: s.busId });
    expect(s.json.Outputs.BusArn.Value).toEqual({ "Fn::GetAtt": [s.busId, "Arn"] });
    expect(s.json.Outputs.TableName.Value).toEqual({ Ref: s.tableId });
  });

  it("streams event streams and /mcp from a Function URL, capped by reserved concurrency, its URL known to the API", () => {
    const s = stageOf(stage);
    const { id: streamId, resource: stream } = s.fn("api-stream");
    const [urlId, url] = s.only("AWS::Lambda::Url");
    expect(url.Properties).toEqual({
      TargetFunctionArn: { "Fn::GetAtt": [streamId, "Arn"] },
      // API Gateway buffers; a Function URL in this mode streams each chunk as it is written.
      InvokeMode: "RESPONSE_STREAM",
      // The app checks the API key on every route, exactly as behind API Gateway.
      AuthType: "NONE",
    });
    // Anyone may call the URL (the app decides), and nothing but the URL may invoke it so.
    const permissions = s
      .ofType("AWS::Lambda::Permission")
      .filter(([, p]) => p.Properties.FunctionName?.["Fn::GetAtt"]?.[0] === streamId);
    // Public URLs now need both grants: the URL's, and Invoke only by way of the URL.
    expect(permissions.map(([, p]) => p.Properties)).toEqual([
      {
        Action: "lambda:InvokeFunctionUrl",
        FunctionName: { "Fn::GetAtt": [streamId, "Arn"] },
        FunctionUrlAuthType: "NONE",
        Principal: "*",
      },
      {
        Action: "lambda:InvokeFunction",
        FunctionName: { "Fn::GetAtt": [streamId, "Arn"] },
        InvokedViaFunctionUrl: true,
        Principal: "*",
      },
    ]);
    const reserved = s.config.streaming.reservedConcurrency;
    expect(stream.Properties.ReservedConcurrentExecutions).toBe(reserved ?? undefined);
    if (stage === "prod") expect(reserved).toBeGreaterThan(0);
    const variables = stream.Properties.Environment.Variables;
    expect(variables.TOOLBUS_FOLLOW_POLL_MS).toBe(String(s.config.streaming.pollIntervalMs));
    // A follower is ended (and resumes) within two minutes, and always before the function's
    // timeout would cut it off: an abandoned stream holds its slot no longer than that.
    const maxMs = Number(variables.TOOLBUS_FOLLOW_MAX_MS);
    expect(maxMs).toBe(STREAM_HOLD_SECONDS * 1000);
    expect(maxMs).toBeLessThan((s.config.functions.streaming.timeoutSeconds - 5) * 1000 + 1);
    expect(followMaxSeconds(20)).toBe(15);
    // The API names the streaming URL (for /health and agent files); no other function does.
    const streamUrl = { "Fn::GetAtt": [urlId, "FunctionUrl"] };
    for (const [handler, id] of s.functions) {
      const env = s.json.Resources[id].Properties.Environment.Variables;
      expect(env.TOOLBUS_STREAM_URL, handler).toEqual(handler === "api" ? streamUrl : undefined);
    }
  });

  it("uses only metric math CloudWatch accepts, in every alarm and dashboard widget", () => {
    const s = stageOf(stage);
    expect(metricMathProblems(s.json)).toEqual([]);
    // The checker does see them: every handler's error-rate alarm (each function's but the
    // seed's, which runs only on deploy) and the cache-ratio widget.
    const alarmed = s.functions.size - 1;
    const expressions = s
      .ofType("AWS::CloudWatch::Alarm")
      .flatMap(([, alarm]) => (alarm.Properties.Metrics ?? []).map((m: Json) => m.Expression))
      .filter(Boolean);
    expect(expressions.filter((e: string) => e.startsWith("IF("))).toHaveLength(alarmed);
    const broken = JSON.parse(
      JSON.stringify(s.json).replaceAll(
        HANDLER_ERROR_RATE_EXPRESSION,
        "100 * errors / MAX([invocations, 1])",
      ),
    );
    expect(metricMathProblems(broken)).toHaveLength(alarmed);
  });

  it("passes cdk-nag's AwsSolutions checks, each exception suppressed on its own resource with its evidence", () => {
    const s = stageOf(stage);
    expect(s.result.findings).toEqual([]);
    // Nothing suppressed stack-wide...
    expect(JSON.stringify((s.json as Json).Metadata ?? {})).not.toContain("cdk_nag");
    const suppressed: {
      resource: string;
      type: string;
      rule: string;
      reason: string;
      appliesTo?: unknown[];
    }[] = s.all.flatMap(([resource, r]) =>
      ((r as Json).Metadata?.cdk_nag?.rules_to_suppress ?? []).map((rule: Json) => ({
        resource,
        type: r.Type,
        rule: rule.id,
        reason: rule.reason,
        appliesTo: rule.applies_to,
      })),
    );
    const expected = [
      "AwsSolutions-APIG4",
      "AwsSolutions-IAM4",
      "AwsSolutions-IAM5",
      "AwsSolutions-L1",
      "AwsSolutions-SQS3",
      ...(s.config.data.pointInTimeRecovery ? [] : ["AwsSolutions-DDB3"]),
    ];
    expect([...new Set(suppressed.map((x) => x.rule))].sort()).toEqual(expected.sort());
    const ours = new Set(s.functions.values());
    const ourRoles = new Set([...ours].map((id) => s.roleOf(id)));
    // Queues that are some target's or function's dead-letter queue.
    const deadLetterQueues = new Set(
      [
        ...s.rules.flatMap(([, r]) =>
          r.Properties.Targets.map((t: Json) => s.arnOf(t.DeadLetterConfig?.Arn)),
        ),
        ...s
          .ofType("AWS::Lambda::EventInvokeConfig")
          .map(([, c]) => s.arnOf(c.Properties.DestinationConfig.OnFailure.Destination)),
        ...s.tableStreamSources.map(([, m]) =>
          s.arnOf(m.Properties.DestinationConfig.OnFailure.Destination),
        ),
      ].filter(Boolean),
    );
    const parameter = (path: string) =>
      `Resource::arn:<AWS::Partition>:ssm:us-east-1:123456789012:parameter${path}`;
    const registeredSecrets = [
      parameter(`/sst/toolbus/${stage}/Secret/${REGISTERED_SECRET_PREFIX}*/value`),
      parameter(`/sst/toolbus/.fallback/Secret/${REGISTERED_SECRET_PREFIX}*/value`),
    ];
    for (const { resource, type, rule, reason, appliesTo } of suppressed) {
      const what = `${rule} on ${resource}`;
      // ...and each with a reason that names its evidence.
      expect(reason.length, what).toBeGreaterThan(60);
      for (const target of appliesTo ?? []) expect(typeof target, what).toBe("string");
      if (rule === "AwsSolutions-SQS3") {
        expect(type, what).toBe("AWS::SQS::Queue");
        expect(deadLetterQueues.has(resource), what).toBe(true);
      }
      if (rule === "AwsSolutions-APIG4") expect(type, what).toBe("AWS::ApiGatewayV2::Route");
      if (rule === "AwsSolutions-DDB3") expect(resource, what).toBe(s.tableId);
      if (rule === "AwsSolutions-IAM5") {
        // Only the exact resources: X-Ray's `*` where the stage traces, ListStreams' `*` on the
        // stream function's role, the registrations' secrets, SST's seed runner invoking its seed.
        expect(appliesTo?.length, what).toBeGreaterThan(0);
        const streamRole = s.roleOf(s.fn(STREAM_HANDLER).id);
        const onStreamRole =
          resource === streamRole || s.policiesOf(streamRole).some(([id]) => id === resource);
        for (const target of appliesTo ?? []) {
          const star = target === "Resource::*";
          const seedRunner = target === `Resource::<${s.fn("seed").id}.Arn>:*`;
          expect(star || seedRunner || registeredSecrets.includes(String(target)), what).toBe(true);
          if (star && !(onStreamRole && reason.includes("ListStreams"))) {
            expect(s.config.tracing, what).not.toBe("disabled");
          }
        }
      }
      if (rule === "AwsSolutions-L1" || rule === "AwsSolutions-IAM4") {
        // Never on a function of ours: only SST's deploy-time handlers and their roles.
        expect(ours.has(resource) || ourRoles.has(resource), what).toBe(false);
        expect(reason, what).toContain("SST");
      }
    }
  });

  it("keeps connected accounts' tokens under a rotating key of the stage's own, kept as long as its data", () => {
    const s = stageOf(stage);
    const [, table] = s.only("AWS::DynamoDB::Table");
    const [, key] = s.only("AWS::KMS::Key");
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeySpec ?? "SYMMETRIC_DEFAULT").toBe("SYMMETRIC_DEFAULT");
    // Removed with the table or kept with it: tokens outlive neither the key nor the other way.
    expect(key.DeletionPolicy).toBe(table.DeletionPolicy);
    expect(key.UpdateReplacePolicy).toBe(table.UpdateReplacePolicy);
    expect(key.DeletionPolicy).toBe(stage === "prod" ? "Retain" : "Delete");
    // The key policy only delegates to the account's IAM: no function is named in it, so the
    // roles' policies below are the whole of who may use it.
    const roles = new Set([...s.functions.values()].map((id) => s.roleOf(id)));
    const statements = key.Properties.KeyPolicy.Statement;
    // The account's IAM decides (CDK's default key policy): else no role's grant would count.
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: "Allow",
        Action: "kms:*",
        Principal: {
          AWS: { "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, ":iam::123456789012:root"]] },
        },
      }),
    );
    for (const statement of statements) {
      expect(JSON.stringify(statement.Principal)).not.toMatch(/Role/);
      for (const role of roles) expect(JSON.stringify(statement)).not.toContain(role);
    }
  });

  it("lets exactly the functions that use connected accounts encrypt and decrypt with the key, and names it to them alone", () => {
    const s = stageOf(stage);
    const keyArn = { "Fn::GetAtt": [s.keyId, "Arn"] };
    // Every KMS statement in the template, with the roles it is attached to.
    const kmsStatements: { statement: Json; roles: string[] }[] = s
      .ofType("AWS::IAM::Policy")
      .flatMap(([, policy]) =>
        policy.Properties.PolicyDocument.Statement.filter((st: Json) =>
          [st.Action].flat().some((action: string) => action.startsWith("kms:")),
        ).map((statement: Json) => ({
          statement,
          roles: policy.Properties.Roles.map((ref: Json) => ref.Ref) as string[],
        })),
      );
    for (const { statement } of kmsStatements) {
      expect(statement.Effect).toBe("Allow");
      expect([statement.Action].flat().sort()).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
      expect(statement.Resource).toEqual(keyArn);
      // Only with a connection item's key as encryption context, as every token blob is sealed.
      expect(statement.Condition).toEqual(WITH_ITEM_KEY);
      const pkPattern = statement.Condition.StringLike["kms:EncryptionContext:pk"];
      for (const pk of CONNECTION_PKS) expect(iamMatches(pkPattern, pk), pk).toBe(true);
      expect(iamMatches(pkPattern, "CALL#c-1")).toBe(false);
    }
    const handlerOfRole = new Map([...s.functions].map(([handler, id]) => [s.roleOf(id), handler]));
    const granted = kmsStatements.flatMap(({ roles }) =>
      roles.map((role) => handlerOfRole.get(role) ?? `not ours: ${role}`),
    );
    expect([...new Set(granted)].sort()).toEqual([...USES_CONNECTIONS].sort());
    expect(granted).toHaveLength(USES_CONNECTIONS.size);
    const named = [...s.functions]
      .filter(
        ([, id]) =>
          CONNECTIONS_KEY_VARIABLE in s.json.Resources[id].Properties.Environment.Variables,
      )
      .map(([handler, id]) => {
        const variables = s.json.Resources[id].Properties.Environment.Variables;
        expect(variables[CONNECTIONS_KEY_VARIABLE], handler).toEqual(keyArn);
        return handler;
      });
    expect(named.sort()).toEqual([...USES_CONNECTIONS].sort());
    // And the sets are what they say: the API's entry points, the two tools, registered tools.
    for (const handler of ["api", "api-stream", "tools/github_api", "tools/calendar"]) {
      expect(s.functions.has(handler), handler).toBe(true);
    }
    for (const handler of [
      "recorder",
      SWEEPER_HANDLER,
      STREAM_HANDLER,
      "seed",
      "tools/web_search",
    ]) {
      expect(USES_CONNECTIONS.has(handler), handler).toBe(false);
    }
  });

  it("denies every other function with the table the items of connected accounts (CONN*)", () => {
    const s = stageOf(stage);
    const tableArn = { "Fn::GetAtt": [s.tableId, "Arn"] };
    const denied: string[] = [];
    for (const [handler, id] of s.functions) {
      const grants = s.grantsOf(id);
      const deny = s
        .policiesOf(s.roleOf(id))
        .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement)
        .filter((st: Json) => st.Effect === "Deny");
      const hasTable = grants.some((g) => g.effect === "Allow" && g.action.startsWith("dynamodb:"));
      expect(hasTable, `${handler} uses the table`).toBe(true);
      if (USES_CONNECTIONS.has(handler)) {
        expect(deny, handler).toEqual([]);
        continue;
      }
      denied.push(handler);
      expect(deny, handler).toHaveLength(1);
      const [statement] = deny;
      expect(statement.Condition, handler).toEqual(DENY_CONNECTION_ITEMS);
      expect([statement.Action].flat().sort(), handler).toEqual(ITEM_ACTIONS);
      expect([statement.Resource].flat(), handler).toContainEqual(tableArn);
      // Every table action the function is allowed falls under the Deny for those keys. Only
      // the stream's function reads the table's change stream (its event source's grants): a
      // stream's reads have no leading key to deny, and its filter hands the function run-log
      // entries alone; a connection item's token in it stays sealed under the key it lacks.
      const streamReads = grants.filter(
        (g) => g.action === "dynamodb:ListStreams" || s.isTableStream(g.resource),
      );
      expect(streamReads.length > 0, handler).toBe(handler === STREAM_HANDLER);
      for (const grant of grants) {
        if (grant.effect !== "Allow" || !grant.action.startsWith("dynamodb:")) continue;
        if (streamReads.includes(grant)) continue;
        expect(ITEM_ACTIONS, `${handler} ${grant.action}`).toContain(grant.action);
      }
      // The pattern catches each of core's connection items, and nothing else of the table's.
      // Spelled out once: deployed stages' items were written under it, so it must not move.
      const [pattern] = statement.Condition["ForAnyValue:StringLike"]["dynamodb:LeadingKeys"];
      expect(pattern).toBe("CONN*");
      for (const pk of CONNECTION_PKS) expect(iamMatches(pattern, pk), pk).toBe(true);
      for (const pk of ["CALL#c-1", "RUN#r-1", "TOOL#github_api", "KEY#k", "CATALOG"]) {
        expect(iamMatches(pattern, pk), pk).toBe(false);
      }
    }
    // The recorder, the sweeper, the stream and the subscriptions among them, by name.
    for (const handler of [
      RECORDER_HANDLER,
      SWEEPER_HANDLER,
      STREAM_HANDLER,
      SUBSCRIPTIONS_HANDLER,
      DELIVERIES_HANDLER,
      "seed",
      "tools/web_search",
    ]) {
      expect(denied, handler).toContain(handler);
    }
    expect(denied.length + USES_CONNECTIONS.size).toBe(s.functions.size);
  });

  it("serves /connect/{provider} and its callback from the API function, with no authorizer at the gateway", () => {
    const s = stageOf(stage);
    // A browser follows the connect link and the provider's redirect with no API key: the one
    // catch-all route sends both to the API function, and no gateway authorizer stands before it.
    const routes = s.ofType("AWS::ApiGatewayV2::Route");
    expect(routes.map(([, r]) => r.Properties.RouteKey)).toEqual(["$default"]);
    const [[, route]] = routes as [[string, Resource]];
    expect(route.Properties.AuthorizationType ?? "NONE").toBe("NONE");
    expect(route.Properties.AuthorizerId).toBeUndefined();
    expect(s.ofType("AWS::ApiGatewayV2::Authorizer")).toEqual([]);
    const [integrationId, integration] = s.only("AWS::ApiGatewayV2::Integration");
    expect(route.Properties.Target).toEqual({
      "Fn::Join": ["", ["integrations/", { Ref: integrationId }]],
    });
    expect(integration.Properties.IntegrationUri).toEqual({
      "Fn::GetAtt": [s.fn("api").id, "Arn"],
    });
  });

  it("registers exactly the stack's rules and targets when the local runtime wires its bus", async () => {
    const s = stageOf(stage);
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    const busName = `toolbus-${stage}`;
    try {
      const handlers = Object.fromEntries(wiring.map((rule) => [rule.handler, () => undefined]));
      await applyWiring({ bus, client, busName, rules: wiring, handlers });
      const listed = await client.send(new ListRulesCommand({ EventBusName: busName }));
      const local = (listed.Rules ?? []).map((r) => ({
        name: r.Name,
        pattern: JSON.parse(r.EventPattern ?? "null"),
      }));
      const deployed = s.rules.map(([, r]) => ({
        name: r.Properties.Name,
        pattern: r.Properties.EventPattern,
      }));
      const byName = (a: { name?: string }, b: { name?: string }) =>
        String(a.name).localeCompare(String(b.name));
      // The stream's row is fed by the run logs, not the bus: on AWS by the table's change
      // stream, locally by the table's only writer, which puts its chunks. Neither has its rule.
      expect(wiring.filter((r) => !fedByBus(r)).map((r) => r.name)).toEqual([STREAM_HANDLER]);
      expect(local.sort(byName)).toEqual(deployed.sort(byName));

      const handlerOfFunction = new Map([...s.functions].map(([handler, id]) => [id, handler]));
      for (const [, rule] of s.rules) {
        const name = rule.Properties.Name;
        const targets = await client.send(
          new ListTargetsByRuleCommand({ Rule: name, EventBusName: busName }),
        );
        const deployedTargets = rule.Properties.Targets.map((t: Json) => ({
          id: t.Id,
          handler: handlerOfFunction.get(s.arnOf(t.Arn)),
        }));
        const localTargets = (targets.Targets ?? []).map((t) => ({
          id: t.Id,
          handler: wiring.find((w) => bus.functionArn(localFunctionName(w.handler)) === t.Arn)
            ?.handler,
        }));
        expect(localTargets, name).toEqual(deployedTargets);
      }
    } finally {
      bus.close();
    }
  });
});

describe("the catalog, the wiring and the stack", () => {
  it("has a rule and a handler file for every tool, and a tool for every handler", () => {
    const s = stageOf("dev");
    const files = readdirSync(join(import.meta.dirname, "../functions/tools"))
      .filter((file) => file.endsWith(".ts"))
      .map((file) => file.replace(/\.ts$/, ""))
      .sort();
    expect(files).toEqual([...toolIds].sort());
    for (const id of toolIds) {
      const found = s.rule(`tool-${id}`);
      expect(found, id).toBeDefined();
      const [, rule] = found ?? [];
      expect(rule?.Properties.Targets[0].Arn).toEqual({
        "Fn::GetAtt": [s.fn(`tools/${id}`).id, "Arn"],
      });
    }
    const deployedTools = [...s.functions.keys()]
      .filter((handler) => handler.startsWith("tools/"))
      .map((handler) => handler.slice("tools/".length))
      .sort();
    expect(deployedTools).toEqual(files);
  });
});

describe("the bundles the dev stack deploys, run in a fresh Node process", () => {
  const ADMIN_KEY = "bundle-test-admin-key-0123456789";
  // The stage's bus, for the API's health check: signed with what the bundles are given.
  const bus = new LocalEventBus();
  let busServer: EventBridgeServer;
  beforeAll(async () => {
    busServer = await startEventBridgeServer(bus, {
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
    await localEventBridgeClient({ bus }).send(new CreateEventBusCommand({ Name: "toolbus-dev" }));
  });
  afterAll(async () => {
    bus.close();
    await busServer.close();
  });
  /** A stand-in for SSM's GetParameters (JSON 1.1 over HTTP), holding SST's parameter names. */
  async function fakeSsm(values: Record<string, string>) {
    const requests: Array<{ Names: string[]; WithDecryption: boolean }> = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        const input = JSON.parse(body);
        requests.push(input);
        const names: string[] = input.Names;
        res.setHeader("content-type", "application/x-amz-json-1.1");
        res.end(
          JSON.stringify({
            Parameters: names
              .filter((name) => name in values)
              .map((name) => ({ Name: name, Type: "SecureString", Value: values[name] })),
            InvalidParameters: names.filter((name) => !(name in values)),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { endpoint: `http://127.0.0.1:${port}`, requests, close: () => server.close() };
  }

  /**
   * A function's environment as Lambda would give it: what the template sets (strings; table
   * and bus names are references), and what Lambda and CloudFormation fill in, pointed at
   * loopback.
   */
  const bundleEnv = (fnEnv: Record<string, unknown>, env: Record<string, string>) => ({
    PATH: process.env.PATH ?? "",
    ...Object.fromEntries(Object.entries(fnEnv).filter(([, v]) => typeof v === "string")),
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_EC2_METADATA_DISABLED: "true",
    // As Lambda sets it: the entry points tell AWS from a local process by it.
    AWS_LAMBDA_FUNCTION_NAME: "toolbus-dev-function",
    AWS_ENDPOINT_URL_DYNAMODB: inject("dynamodbEndpoint"),
    AWS_ENDPOINT_URL_EVENTBRIDGE: busServer.endpoint,
    TOOLBUS_BUS: "toolbus-dev",
    ...env,
  });

  /** Imports a bundle as Lambda would (ESM, cold) and calls its handler with each event. */
  async function invoke(handler: string, env: Record<string, string>, events: unknown[]) {
    const s = stageOf("dev");
    const bundle = s.result.bundles.get(`functions/${handler}`);
    const fnEnv = s.json.Resources[s.fn(handler).id].Properties.Environment.Variables;
    const script = [
      "const { handler } = await import(process.argv[1]);",
      "const results = [];",
      "for (const event of JSON.parse(process.argv[2])) results.push(await handler(event));",
      // Handlers log to stdout too: the results are the last line, marked.
      "process.stdout.write('\\nRESULTS ' + JSON.stringify(results));",
    ].join("\n");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--input-type=module", "-e", script, String(bundle), JSON.stringify(events)],
      {
        env: bundleEnv(fnEnv, env),
        timeout: 60_000,
      },
    );
    const marked = stdout.split("\n").find((line) => line.startsWith("RESULTS "));
    return JSON.parse(String(marked).slice("RESULTS ".length));
  }

  /** A GET, or a POST of `json` when there is one. */
  const httpEvent = (path: string, headers: Record<string, string> = {}, json?: unknown) => ({
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers: {
      host: "api.example.com",
      ...(json === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    requestContext: {
      http: {
        method: json === undefined ? "GET" : "POST",
        path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: "t",
      },
      domainName: "api.example.com",
      requestId: "r-1",
      routeKey: "$default",
      stage: "$default",
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    isBase64Encoded: false,
  });

  it("streams a run's events from the streaming endpoint's bundle as they are logged, and stops when the client goes away", async () => {
    // The rest of the stage runs here: the API, the tools and the recorder, on their own table.
    const system = await startTestToolbus();
    const ssm = await fakeSsm({
      "/sst/toolbus/dev/Secret/TOOLBUS_ADMIN_KEY/value": system.adminKey,
    });
    const s = stageOf("dev");
    const { resource } = s.fn("api-stream");
    const fnEnv = resource.Properties.Environment.Variables;
    const runId = system.runId();
    const auth = { authorization: `Bearer ${system.adminKey}` };
    const events = [
      // What only the HTTP API serves is refused here, and says where to go.
      httpEvent("/v1/tools", auth),
      // MCP is served (its answers will stream), with the catalog the stage seeded.
      httpEvent(
        "/mcp",
        { ...auth, accept: "application/json, text/event-stream" },
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
        },
      ),
      httpEvent("/v1/runs/x/events", { accept: "text/event-stream" }),
      // Last: a follower of the run, held open until the test hangs up.
      httpEvent(`/v1/runs/${runId}/events`, { ...auth, accept: "text/event-stream" }),
    ];
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        STREAMING_INVOKER,
        String(bundleEntry(s, "api-stream")),
        JSON.stringify(events),
      ],
      {
        env: bundleEnv(fnEnv, {
          AWS_ENDPOINT_URL_SSM: ssm.endpoint,
          AWS_LAMBDA_FUNCTION_NAME: "toolbus-dev-ApiStream",
          TOOLBUS_TABLE: system.tableName,
          // As CloudFormation fills them in; the calls here run in the test's own process.
          [FUNCTIONS_ENV]: renderRefs(fnEnv[FUNCTIONS_ENV], longestFunctionName) ?? "",
        }),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    const responses = new StreamedResponses();
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => responses.feed(text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const until = async (what: string, check: () => boolean, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!check()) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}\n${stderr.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      const follower = () => responses.response(3);
      await until("the follower's headers", () => follower().statusCode !== undefined);
      expect(follower().statusCode).toBe(200);
      expect(follower().headers["content-type"]).toMatch(/^text\/event-stream/);
      expect(follower().done).toBe(false);

      const refused = responses.response(0);
      const mcp = responses.response(1);
      const anonymous = responses.response(2);
      expect(refused.statusCode).toBe(404);
      expect(JSON.parse(refused.body).error.message).toContain("served by the API URL");
      expect(mcp.statusCode).toBe(200);
      expect(mcp.body).toContain('"name":"readability_analyzer"');
      expect(anonymous.statusCode).toBe(401);

      // A call made now reaches the open stream: both of its events, while it stays open.
      const call = await system.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "readability_analyzer", input: { text: "The cat sat." }, callId: "live-1" },
      });
      expect(call.status).toBe(200);
      await until("both events of the call", () =>
        /event: ToolResultReceived/.test(follower().body),
      );
      const body = follower().body;
      expect(body.indexOf("event: ToolCallScheduled")).toBeGreaterThanOrEqual(0);
      expect(body.indexOf("event: ToolCallScheduled")).toBeLessThan(
        body.indexOf("event: ToolResultReceived"),
      );
      expect(body).toContain('"callId":"live-1"');
      expect(follower().done).toBe(false);

      // The client hangs up: the handler ends at once instead of polling on to its timeout.
      child.stdin.write("hang up\n");
      await until("the handler to end", () => follower().done, 10_000);
      expect(await exited).toBe(0);
    } finally {
      child.kill();
      ssm.close();
      await system.stop();
    }
  }, 120_000);

  it("seeds the catalog, then serves it to the admin key SST bound from SSM", async () => {
    const dynamodb = testDynamoDbClient();
    const { TableName: _name, ...definition } = createTableInput("unused");
    const table = await createTestTable(dynamodb, { ...definition, namePrefix: "bundles" });
    const ssm = await fakeSsm({
      "/sst/toolbus/dev/Secret/TOOLBUS_ADMIN_KEY/value": ADMIN_KEY,
      "/sst/toolbus/.fallback/Secret/SEARCH_API_KEY/value": "search-key-from-the-fallback",
    });
    try {
      const env = { TOOLBUS_TABLE: table.tableName, AWS_ENDPOINT_URL_SSM: ssm.endpoint };
      const [seeded, again] = await invoke("seed", env, [{}, {}]);
      expect(seeded.written).toEqual(expect.arrayContaining(toolIds.map((id) => `tool:${id}`)));
      expect(again.written).toEqual([]);
      const available = Object.fromEntries(
        seeded.capabilities.map((c: { name: string; available: boolean }) => [c.name, c.available]),
      );
      expect(available).toMatchObject({ search_api_key: true, github_token: false });
      // Every bound secret was asked for, decrypted, stage first and then the fallback.
      expect(ssm.requests[0]).toEqual({
        Names: TOOL_SECRET_NAMES.map((n) => `/sst/toolbus/dev/Secret/${n}/value`),
        WithDecryption: true,
      });
      expect(ssm.requests[1]?.Names).toEqual(
        TOOL_SECRET_NAMES.map((n) => `/sst/toolbus/.fallback/Secret/${n}/value`),
      );

      // The API cold-starts with its Lambda dispatcher, from the template's function names as
      // CloudFormation would fill them in (nothing here waits for a call, so none is invoked).
      const apiVariables = stageOf("dev").fn("api").resource.Properties.Environment.Variables;
      const functions = renderRefs(apiVariables[FUNCTIONS_ENV], longestFunctionName) ?? "";
      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const mcpList = { ...admin, accept: "application/json, text/event-stream" };
      const [health, tools, refused, mcp, found] = await invoke(
        "api",
        { ...env, [FUNCTIONS_ENV]: functions },
        [
          httpEvent("/health"),
          httpEvent("/v1/tools", admin),
          httpEvent("/v1/tools", { authorization: "Bearer not-the-admin-key-at-all-0000" }),
          // The MCP server, built without Ajv (see stacks/bundling.ts), lists the catalog.
          httpEvent("/mcp", mcpList, { jsonrpc: "2.0", id: 1, method: "tools/list" }),
          // Search, with the ranking chunk it loads on first use.
          httpEvent("/v1/tools/search", admin, { q: "how readable is this text" }),
        ],
      );
      expect(health.statusCode).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({
        status: "ok",
        stage: "dev",
        dependencies: { dynamodb: { status: "ok" }, eventbridge: { status: "ok" } },
      });
      expect(tools.statusCode).toBe(200);
      expect(tools.body).toContain('"web_search"');
      expect(refused.statusCode).toBe(401);
      expect(refused.body).not.toContain(ADMIN_KEY);
      expect(mcp.statusCode).toBe(200);
      // readability_analyzer computes offline: listed whether or not this machine has internet
      // (web_search requires the network capability the seed probed).
      expect(mcp.body).toContain('"name":"readability_analyzer"');
      expect(found.statusCode).toBe(200);
      expect(JSON.parse(found.body).tools[0]).toMatchObject({ id: "readability_analyzer" });
    } finally {
      ssm.close();
      await table.drop();
    }
  }, 120_000);
});
