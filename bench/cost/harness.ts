import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import {
  busRules,
  ensureTable,
  fedByBus,
  RECORDER_HANDLER,
  REGISTERED_KINDS,
  registeredHandlerId,
  STREAM_HANDLER,
  SUBSCRIPTIONS_HANDLER,
  SUBSCRIPTIONS_RULE,
  SWEEPER_HANDLER,
  toolHandlerId,
  toolSpecOf,
} from "@toolbus/core";
import { createDocumentClient, DynamoEventLog } from "@toolbus/core/store/dynamodb";
import { builtinTools } from "@toolbus/tools";
import {
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../../packages/local/src/dynamodb";
import { applyWiring, localFunctionName } from "../../packages/local/src/runtime/wiring";
import { DEFAULT_STAGE_FILE, STAGE_FILES, stackConfigFor } from "../../stacks/config";
import { LAMBDA_LOGGING, platformLinesLogged } from "../../stacks/lambda-logging";
import { httpApiEvent } from "./http-api-event";
import { type FunctionCounts, FunctionInstances, type FunctionSpec } from "./instances";
import { startLambdaEndpoint } from "./lambda-endpoint";
import { emptyTableStreamCounts, TableStream, type TableStreamCounts } from "./table-stream";
import { startReceiver } from "./webhook-receiver";

/** The tool measured, and its input: 200 bytes of English prose (ASCII). */
export const MEASURED_TOOL = "readability_analyzer";
export const INPUT_TEXT =
  "Toolbus serves tools to agents. Each call is stored before it runs, announced on the bus, and kept in its run's log. Short sentences read well; long ones, with many clauses, read less well, as a rule.";

export interface ScenarioCounts {
  /** Calls measured (after the warm-up). */
  calls: number;
  /** API Gateway HTTP API requests. */
  apiRequests: number;
  /** Per deployed function, by its handler id (`api`, `tools/readability_analyzer`, ...). */
  functions: Record<string, FunctionCounts & { memoryMB: number }>;
  /**
   * The table's change stream feeding the stage stream's function (Lambda's event source
   * mapping over DynamoDB Local's stream): invocations, records handed over and filtered out.
   */
  tableStream: TableStreamCounts;
  /** Webhook deliveries the receiver answered, and their bytes. */
  webhook: { requests: number; bytes: number };
  /** Sizes seen: the call's request and response bodies (bytes). */
  requestBytes: number;
  responseBytes: number;
  /**
   * Per call, milliseconds from the API's answer until a reader had read both of its events in
   * its run's log, the read's own time included. A call logged by whoever finished it is
   * there before the answer leaves; one left to the recorder, a bus delivery later (immediate
   * here; EventBridge's own delivery time would come on top).
   */
  loggedAfterAnswerMs: number[];
  /** Calls whose two events the reader's first read after the answer already found. */
  loggedAtAnswer: number;
}

export interface CostCounts {
  stage: string;
  /** Lambda's architecture as the stack deploys it. */
  architecture: "arm64";
  withoutSubscription: ScenarioCounts;
  withSubscription: ScenarioCounts;
}

export interface CostHarnessOptions {
  /** The stage whose stack configuration sizes the functions (its stacks/config file). */
  stage?: string;
  calls?: number;
  warmup?: number;
  /** Echo every function's output to stderr (debugging). */
  echoLogs?: boolean;
  /** A DynamoDB Local already running (tests share one); else one is started and stopped. */
  dynamodbEndpoint?: string;
  /** Another tool and input to call instead of readability_analyzer's (checking other paths). */
  call?: { tool: string; input: unknown };
}

/** The tool limits the stack checks its configuration against (stacks/Toolbus.ts). */
function toolLimits() {
  const byId = new Map(builtinTools.map((tool) => [tool.spec.id, tool]));
  return builtinTools.map((tool) => {
    const fallback = toolSpecOf(tool).fallback;
    const fallbackTool = fallback ? byId.get(fallback) : undefined;
    return {
      id: tool.spec.id,
      timeoutMs:
        toolSpecOf(tool).timeoutMs + (fallbackTool ? toolSpecOf(fallbackTool).timeoutMs : 0),
      ...(tool.settings ? { settings: tool.settings } : {}),
    };
  });
}

/**
 * Runs the deployed functions' entry points as separate instances against DynamoDB Local and
 * the local bus wired as the stack wires EventBridge (the stream's function fed by the table's
 * change stream, as deployed), makes synchronous REST calls of
 * readability_analyzer through the API function, and returns what each call cost in requests,
 * units, events and bytes: without any subscription, then with one webhook subscription that
 * matches every event.
 */
export async function measureCostCounts(options: CostHarnessOptions = {}): Promise<CostCounts> {
  const stage = options.stage ?? "prod";
  const calls = options.calls ?? 200;
  const warmup = options.warmup ?? 50;
  // The stage's file as it is, except alarms' recipients (prod's names none in the repository).
  const file = STAGE_FILES[Object.hasOwn(STAGE_FILES, stage) ? stage : DEFAULT_STAGE_FILE];
  const config = stackConfigFor(stage, {
    raw: { ...(file as object), alarms: { nobody: "measuring cost only" } },
    tools: toolLimits(),
  });
  // The stage's runtime configuration, as the stack hands it to every function, allowing the
  // loopback webhook receiver as an outbound host.
  const toolbusConfig = JSON.parse(config.toolbusJson) as {
    outbound?: { allowHosts?: string[] };
  };
  toolbusConfig.outbound = {
    ...toolbusConfig.outbound,
    allowHosts: [...(toolbusConfig.outbound?.allowHosts ?? []), "127.0.0.1"],
  };
  const tableName = `toolbus-cost-${randomUUID().slice(0, 8)}`;
  const busName = tableName;
  const adminKey = `cost-${randomUUID()}-admin`;

  const dynamo = options.dynamodbEndpoint
    ? { endpoint: options.dynamodbEndpoint, stop: async () => {} }
    : await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const busServer = await startEventBridgeServer(bus);
  const eventBridge = localEventBridgeClient(busServer);
  const dynamodb = localDynamoDbClient(dynamo.endpoint);
  // The same endpoint serves the table's stream (DynamoDB Local supports DynamoDB Streams).
  const streams = new DynamoDBStreamsClient({
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    endpoint: dynamo.endpoint,
  });
  const receiver = await startReceiver();
  const instances = new Map<string, FunctionInstances>();
  let lambda: Awaited<ReturnType<typeof startLambdaEndpoint>> | undefined;
  let tableStream: TableStream | undefined;
  try {
    // Core's table definition: the stack's, its stream (NEW_IMAGE) included.
    // With the change stream the stack turns on: the table-stream model reads it as Lambda does.
    await ensureTable(dynamodb, tableName, { changeStream: true });
    lambda = await startLambdaEndpoint(instances);

    const dispatchable = [
      ...builtinTools.map((tool) => toolHandlerId(tool.spec.id)),
      ...REGISTERED_KINDS.map(registeredHandlerId),
    ].sort();
    const baseEnv: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      TZ: "UTC",
      AWS_REGION: "us-east-1",
      AWS_DEFAULT_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: busServer.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: busServer.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: busServer.endpoint,
      AWS_EXECUTION_ENV: "AWS_Lambda_nodejs24.x",
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      TOOLBUS_TABLE: tableName,
      TOOLBUS_BUS: busName,
      TOOLBUS_CONFIG: JSON.stringify(toolbusConfig),
    };
    const spec = (
      handler: string,
      size: { memoryMB: number; timeoutSeconds: number },
      extra: Record<string, string> = {},
    ): FunctionSpec => {
      const name = localFunctionName(handler);
      return {
        handler,
        name,
        memoryMB: size.memoryMB,
        timeoutSeconds: size.timeoutSeconds,
        traced: config.tracing === "active",
        platformLines: platformLinesLogged(LAMBDA_LOGGING),
        env: {
          ...baseEnv,
          AWS_LAMBDA_FUNCTION_NAME: name,
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(size.memoryMB),
          AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${name}`,
          COST_TIMEOUT_SECONDS: String(size.timeoutSeconds),
          ...extra,
        },
      };
    };
    const measured = options.call ?? { tool: MEASURED_TOOL, input: { text: INPUT_TEXT } };
    const tool = toolHandlerId(measured.tool);
    const specs = [
      spec("api", config.functions.api, {
        TOOLBUS_ADMIN_KEY: adminKey,
        TOOLBUS_FUNCTIONS: JSON.stringify(
          Object.fromEntries(dispatchable.map((handler) => [handler, localFunctionName(handler)])),
        ),
        // The streaming endpoint's Function URL: the API only names it in its answers.
        TOOLBUS_STREAM_URL: "https://costharness0stream0url0.lambda-url.us-east-1.on.aws/",
        AWS_ENDPOINT_URL_LAMBDA: lambda.endpoint,
        // As the stack names it: the API switches the rule as subscriptions come and go.
        TOOLBUS_SUBSCRIPTIONS_RULE: SUBSCRIPTIONS_RULE,
      }),
      spec(tool, config.functions.tool),
      spec(RECORDER_HANDLER, config.functions.recorder),
      // The stack sizes the fan-out like a tool (a webhook may take its whole timeout) and
      // the stream writer like the recorder.
      spec(SUBSCRIPTIONS_HANDLER, config.functions.tool),
      spec(STREAM_HANDLER, config.functions.recorder),
      spec("seed", config.functions.seed),
      // Run once after the wiring, as its first minute after a deploy: its reconcile sets the
      // subscriptions rule. A timed job, not part of any call.
      spec(SWEEPER_HANDLER, config.functions.recorder, {
        TOOLBUS_SUBSCRIPTIONS_RULE: SUBSCRIPTIONS_RULE,
      }),
    ];
    for (const s of specs) {
      const pool = new FunctionInstances(s, {
        maxInstances: 8,
        echoLogs: options.echoLogs ?? false,
      });
      instances.set(s.name, pool);
    }
    await Promise.all([...instances.values()].map((pool) => pool.start()));
    const byHandler = (handler: string) => {
      const pool = instances.get(localFunctionName(handler));
      if (!pool) throw new Error(`No instance of ${handler}`);
      return pool;
    };

    // Deploy-time seeding, as the stack's Script runs it: not part of any call.
    const seeded = await byHandler("seed").invoke({});
    if (seeded.error) throw new Error(`seed failed: ${seeded.error.errorMessage}`);

    // The wiring table, applied as deployed: a rule the bus feeds invokes its function
    // asynchronously; the stream's function is fed by the table's change stream instead (its
    // event source mapping, modelled over DynamoDB Local's stream from here on: the seeding's
    // writes come before it, as the deploy's Script runs before any call).
    const stream = new TableStream({
      dynamodb,
      streams,
      tableName,
      consume: (event) => byHandler(STREAM_HANDLER).invoke(event),
    });
    tableStream = stream;
    await stream.start();
    const rules = busRules(builtinTools.map((t) => t.spec.id)).filter(fedByBus);
    const handlers = Object.fromEntries(
      rules.map((rule) => {
        const pool = instances.get(localFunctionName(rule.handler));
        const run = async (event: unknown) => {
          if (!pool) throw new Error(`${rule.handler} is not deployed in the cost harness`);
          const result = await pool.invoke(event);
          if (result.error) throw new Error(`${rule.handler}: ${result.error.errorMessage}`);
        };
        return [rule.handler, run];
      }),
    );
    await applyWiring({ bus, client: eventBridge, busName, rules, handlers });
    // The stack deploys every rule enabled; the first sweep switches the subscriptions rule
    // off, since there is no subscription yet. The bus then skips it as EventBridge does.
    const swept = await byHandler(SWEEPER_HANDLER).invoke({ source: "aws.events" });
    if (swept.error) throw new Error(`sweeper failed: ${swept.error.errorMessage}`);

    const api = byHandler("api");
    const request = async (method: string, path: string, key: string, body?: unknown) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (text) headers["content-type"] = "application/json";
      const result = await api.invoke(httpApiEvent(method, path, headers, text));
      if (result.error) throw new Error(`API failed: ${result.error.errorMessage}`);
      const answer = result.value as { statusCode: number; body?: string };
      return {
        status: answer.statusCode,
        body: answer.body ?? "",
        requestBytes: text ? Buffer.byteLength(text) : 0,
      };
    };

    /** Waits until the bus, the table's stream and every function are quiet, twice in a row. */
    const settle = async () => {
      let quiet = 0;
      while (quiet < 2) {
        await bus.drain();
        await stream.settled();
        await sleep(15);
        const busy = [...instances.values()].some((pool) => pool.inFlight > 0);
        quiet = busy || !stream.idle ? 0 : quiet + 1;
      }
    };

    const created = await request("POST", "/v1/keys", adminKey, {
      name: "cost harness",
      role: "member",
    });
    if (created.status !== 201) throw new Error(`key: ${created.status} ${created.body}`);
    const memberKey = (JSON.parse(created.body) as { key: string }).key;
    const runId = `cost-${randomUUID()}`;
    const sizes = { request: 0, response: 0 };
    // The run's log as readers read it, from this process (unmetered): positions only advance.
    const log = new DynamoEventLog({ client: createDocumentClient(dynamodb), tableName });
    let cursor: string | undefined;
    let loggedAfterAnswerMs: number[] = [];
    let loggedAtAnswer = 0;
    const loggedAfterAnswer = async (callId: string, answeredAt: number) => {
      const seen = new Set<string>();
      const deadline = answeredAt + 10_000;
      for (let reads = 1; seen.size < 2; reads++) {
        if (performance.now() > deadline)
          throw new Error(`call ${callId}: not in its log after 10 s`);
        const page = await log.read(runId, { ...(cursor ? { cursor } : {}), limit: 100 });
        cursor = page.cursor;
        for (const event of page.events) {
          if (event.detail.callId === callId) seen.add(event.detailType);
        }
        if (seen.size === 2 && reads === 1) loggedAtAnswer++;
        if (seen.size < 2) await sleep(1);
      }
      return performance.now() - answeredAt;
    };
    const call = async () => {
      const answer = await request("POST", `/v1/runs/${runId}/calls`, memberKey, {
        tool: measured.tool,
        input: measured.input,
        wait: 20,
      });
      const answeredAt = performance.now();
      const { status, callId } = JSON.parse(answer.body) as { status?: string; callId: string };
      if (answer.status !== 200 || status !== "succeeded") {
        throw new Error(`call failed: ${answer.status} ${answer.body.slice(0, 500)}`);
      }
      loggedAfterAnswerMs.push(await loggedAfterAnswer(callId, answeredAt));
      sizes.request = answer.requestBytes;
      sizes.response = Buffer.byteLength(answer.body);
      await settle();
    };

    const scenario = async (): Promise<ScenarioCounts> => {
      for (let i = 0; i < warmup; i++) await call();
      await settle();
      for (const pool of instances.values()) pool.reset();
      stream.counts = emptyTableStreamCounts();
      receiver.counts.requests = 0;
      receiver.counts.bytes = 0;
      loggedAfterAnswerMs = [];
      loggedAtAnswer = 0;
      for (let i = 0; i < calls; i++) await call();
      await settle();
      // Let the threads' last output reach their streams.
      await sleep(50);
      const functions: ScenarioCounts["functions"] = {};
      for (const pool of instances.values()) {
        if (pool.spec.handler === "seed" || pool.spec.handler === SWEEPER_HANDLER) continue;
        functions[pool.spec.handler] = { ...(await pool.collect()), memoryMB: pool.spec.memoryMB };
      }
      return {
        calls,
        apiRequests: calls,
        functions,
        tableStream: { ...stream.counts },
        webhook: { ...receiver.counts },
        requestBytes: sizes.request,
        responseBytes: sizes.response,
        loggedAfterAnswerMs: [...loggedAfterAnswerMs],
        loggedAtAnswer,
      };
    };

    const withoutSubscription = await scenario();
    const subscribed = await request("POST", "/v1/subscriptions", memberKey, {
      name: "every event",
      pattern: { source: ["toolbus"] },
      target: { kind: "webhook", url: receiver.url },
    });
    if (subscribed.status !== 201) {
      throw new Error(`subscription: ${subscribed.status} ${subscribed.body}`);
    }
    // A warm fan-out asks whether subscriptions changed at most once a second.
    await sleep(1_500);
    await settle();
    const withSubscription = await scenario();
    if (withSubscription.webhook.requests === 0) {
      throw new Error("The webhook subscription received no delivery.");
    }
    return { stage, architecture: "arm64", withoutSubscription, withSubscription };
  } finally {
    await tableStream?.stop();
    await Promise.all([...instances.values()].map((pool) => pool.stop()));
    await lambda?.close();
    await receiver.close();
    bus.close();
    eventBridge.destroy();
    dynamodb.destroy();
    streams.destroy();
    await busServer.close();
    await dynamo.stop();
  }
}
