import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { EVENT_SOURCE, ensureTable } from "@toolbus/core";
import { LocalEventBus, localEventBridgeClient, startEventBridgeServer } from "@toolbus/local/bus";
import { scheduledDetail } from "../packages/core/src/app/calls/lifecycle";
import { DynamoCallStore } from "../packages/core/src/store/dynamodb";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import type { CallRecord } from "../packages/wire/src/model/call";
import { bundleBudgetKB } from "../stacks/budgets";
import { bundleFiles, bundleSizes } from "../stacks/bundle-files";
import { nodejsFor, sstEsbuildOptions } from "../stacks/bundling";
import { pendingCall } from "../test/support/calls";
import { type Measurement, measurement } from "./stats";

/**
 * Each function's bundle as SST builds it (the same esbuild and options): its size against
 * its budget, what weighs most in it (esbuild's metafile), and its cold start: a fresh `node`
 * importing it and handling one real first event against DynamoDB Local and the local bus
 * (a tool claims a recorded call, runs, stores the result and publishes it), against a
 * baseline bundle that holds only the SDK clients the function uses and sends the same AWS
 * requests: the operations the function sent, recorded in the same round, in the same order
 * and with the same concurrency. The difference is our code: loading it and running it.
 */

const ROOT = join(import.meta.dirname, "..");
/** Under node_modules, so a bundle that leaves the SDK out resolves it as Lambda's runtime would. */
const OUT = join(ROOT, "node_modules", ".cache", "toolbus-bench-bundles");
/** Cold starts per function (and as many of its baseline), interleaved; medians reported. */
const ROUNDS = Number(process.env.BENCH_BUNDLE_ROUNDS ?? 15);
const TABLE = "toolbus-bench-bundles";
const BUS = "toolbus-bench-bundles";

// SST builds with the esbuild it ships, not ours: the same version gives the same bytes.
const esbuild: typeof import("esbuild") = createRequire(
  join(ROOT, "node_modules/sst/package.json"),
)("esbuild");

type Event = unknown;

/** The bus's delivery of a call's `ToolCallScheduled`, as a rule hands it to a function. */
function delivery(call: CallRecord): Event {
  return {
    source: EVENT_SOURCE,
    "detail-type": "ToolCallScheduled",
    time: call.scheduledAt,
    detail: scheduledDetail(call),
  };
}

/** An authenticated catalog read: the API's everyday request. */
const listTools = (adminKey: string): Event => ({
  version: "2.0",
  routeKey: "$default",
  rawPath: "/v1/tools",
  rawQueryString: "",
  headers: { host: "api.example.com", authorization: `Bearer ${adminKey}` },
  requestContext: {
    http: { method: "GET", path: "/v1/tools", protocol: "HTTP/1.1", sourceIp: "127.0.0.1" },
    domainName: "api.example.com",
    requestId: "r-1",
    routeKey: "$default",
    stage: "$default",
  },
  isBase64Encoded: false,
});

/** Inputs a tool runs without the network; a tool that needs it gets `{}`, which its
 * schema refuses: the call still goes claim, store, publish, but without an upstream. */
const OFFLINE_INPUTS: Record<string, unknown> = {
  readability_analyzer: { text: "The cat sat on the mat. It was a sunny day, and it was happy." },
  static_links: { limit: 5 },
};

interface Fn {
  handler: string;
  /**
   * Makes the first event it handles (recording what that event refers to); none for the
   * seed, which runs once per deploy.
   */
  event?: (setup: Setup) => Promise<Event>;
  /** SDK clients it holds: every function reads DynamoDB; most also publish. */
  publishes: boolean;
}

interface Setup {
  calls: DynamoCallStore;
  adminKey: string;
}

/** A call recorded as pending, delivered: what a handler's first event usually is. */
const recordedCall =
  (toolId: string, input: unknown = {}) =>
  async ({ calls }: Setup) => {
    const call = pendingCall(toolId, input, {
      parentRunId: "bench-run",
      callId: `bench-${randomUUID()}`,
    });
    await calls.create(call);
    return delivery(call);
  };

async function functionsToMeasure(): Promise<Fn[]> {
  const tools = (await readdir(join(ROOT, "functions/tools"))).map((f) => f.replace(/\.ts$/, ""));
  return [
    { handler: "api", event: async ({ adminKey }) => listTools(adminKey), publishes: true },
    // The recorder logs the scheduling of a recorded call.
    { handler: "recorder", event: recordedCall("readability_analyzer"), publishes: false },
    // The stage stream's writer appends the same event to the stream.
    { handler: "stream", event: recordedCall("readability_analyzer"), publishes: false },
    { handler: "sweeper", event: async () => ({ source: "aws.events" }), publishes: true },
    { handler: "seed", publishes: true },
    // The subscriptions fan-out matches a scheduled call's event (against no subscription),
    // and the retry driver looks for what is due: what each does on a quiet stage.
    { handler: "subscriptions", event: recordedCall("readability_analyzer"), publishes: false },
    { handler: "deliveries", event: async () => ({ source: "aws.events" }), publishes: false },
    // Registered tools not in the catalog: claimed, found missing, failed, published.
    { handler: "registered/http", event: recordedCall("bench_http"), publishes: true },
    { handler: "registered/mcp", event: recordedCall("bench_mcp"), publishes: true },
    ...tools.map((tool) => ({
      handler: `tools/${tool}`,
      event: recordedCall(tool, OFFLINE_INPUTS[tool]),
      publishes: true,
    })),
  ];
}

/**
 * The floor: the SDK clients a function holds, built as SST builds it, sending the requests
 * the function sent (`waves` of concurrent operations, in order). Each operation is the
 * plainest request of its kind on one item, so what the baseline costs is the SDK's own work.
 */
function baselineSource(publishes: boolean): string {
  const table = "process.env.TOOLBUS_TABLE";
  const key = `{ pk: "bench#baseline", sk: "item" }`;
  const dynamodb: Record<string, string> = {
    GetItem: `doc.send(new GetCommand({ TableName: ${table}, Key: ${key} }))`,
    PutItem: `doc.send(new PutCommand({ TableName: ${table}, Item: { ...${key}, n: 1 } }))`,
    UpdateItem: `doc.send(new UpdateCommand({ TableName: ${table}, Key: ${key}, UpdateExpression: "SET n = :n", ExpressionAttributeValues: { ":n": 2 }, ReturnValues: "ALL_NEW" }))`,
    Query: `doc.send(new QueryCommand({ TableName: ${table}, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "bench#baseline" } }))`,
    BatchWriteItem: `doc.send(new BatchWriteCommand({ RequestItems: { [${table}]: [{ PutRequest: { Item: { ...${key}, n: 3 } } }] } }))`,
    BatchGetItem: `doc.send(new BatchGetCommand({ RequestItems: { [${table}]: { Keys: [${key}] } } }))`,
    TransactWriteItems: `doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: ${table}, Item: { ...${key}, n: 4 } } }] }))`,
    DescribeTable: `raw.send(new DescribeTableCommand({ TableName: ${table} }))`,
  };
  const eventBridge: Record<string, string> = {
    PutEvents: `bus.send(new PutEventsCommand({ Entries: [{ EventBusName: process.env.TOOLBUS_BUS, Source: "bench.baseline", DetailType: "Baseline", Detail: "{}" }] }))`,
    DescribeEventBus: "bus.send(new DescribeEventBusCommand({ Name: process.env.TOOLBUS_BUS }))",
  };
  const requests = [
    ...Object.entries(dynamodb).map(([op, send]) => `"DynamoDB_20120810.${op}": () => ${send},`),
    ...(publishes
      ? Object.entries(eventBridge).map(([op, send]) => `"AWSEvents.${op}": () => ${send},`)
      : []),
  ];
  return [
    `import { DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";`,
    `import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";`,
    publishes
      ? `import { DescribeEventBusCommand, EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";`
      : "",
    `import { DYNAMODB_CLIENT_OPTIONS, SDK_CLIENT_OPTIONS } from "${join(ROOT, "packages/core/src/sdk-options.ts")}";`,
    "const raw = new DynamoDBClient(DYNAMODB_CLIENT_OPTIONS);",
    "const doc = DynamoDBDocumentClient.from(raw);",
    publishes ? "const bus = new EventBridgeClient(SDK_CLIENT_OPTIONS);" : "",
    `const requests = {\n${requests.join("\n")}\n};`,
    "export const handler = async ({ waves }) => {",
    "  for (const wave of waves) {",
    "    await Promise.all(wave.map((op) => {",
    "      const send = requests[op];",
    '      if (!send) throw new Error("The baseline cannot send " + op);',
    "      return send();",
    "    }));",
    "  }",
    "};",
  ].join("\n");
}

interface Built {
  /** The entry: the bundle, or for a function split into chunks, the file importing them. */
  file: string;
  /** What a cold start loads: the bundle, or the entry and its static chunks. */
  bytes: number;
  /** Chunks loaded on a path's first use (split functions only). */
  lazyBytes: number;
  /** Largest contributors to `bytes`: packages (or our source folders) by bytes in the output. */
  top: Array<[string, number]>;
}

async function build(entry: string, outfile: string, external: string[] = []): Promise<Built> {
  // As SST bundles the function of this handler (the API in chunks); baselines as one file.
  const handler = relative(join(ROOT, "functions"), entry).replace(/\.ts$/, "");
  const options = sstEsbuildOptions(entry, outfile, nodejsFor(handler));
  const result = await esbuild.build({
    ...options,
    absWorkingDir: ROOT,
    external: [...options.external, ...external],
  });
  const byPackage = new Map<string, number>();
  for (const file of bundleFiles(outfile).coldStart) {
    const output = result.metafile.outputs[relative(ROOT, file)];
    for (const [path, input] of Object.entries(output?.inputs ?? {})) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
      const key = pkg ?? relative(ROOT, join(ROOT, path)).split("/").slice(0, 3).join("/");
      byPackage.set(key, (byPackage.get(key) ?? 0) + input.bytesInOutput);
    }
  }
  const top = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 5);
  const sizes = bundleSizes(outfile);
  return { file: outfile, bytes: sizes.coldStart, lazyBytes: sizes.lazy, top };
}

/** AWS operations (`x-amz-target`), grouped in waves of requests that were in flight together. */
type Waves = string[][];

interface Cold {
  ms: number;
  waves: Waves;
}

/**
 * ms from the start of a fresh node's script to the end of its first event, and the AWS
 * requests that event sent. The same script runs a function and its baseline, so what it
 * adds (a diagnostics channel listener) lands on both sides.
 */
async function coldStart(file: string, event: Event, env: NodeJS.ProcessEnv): Promise<Cold> {
  const script = [
    'import { subscribe } from "node:diagnostics_channel";',
    "const sent = new Map();",
    'subscribe("http.client.request.start", ({ request }) =>',
    '  sent.set(request, { op: String(request.getHeader("x-amz-target")), start: performance.now(), end: Infinity }));',
    'subscribe("http.client.response.finish", ({ request }) => {',
    "  const req = sent.get(request); if (req) req.end = performance.now(); });",
    "const t0 = performance.now();",
    "const { handler } = await import(process.argv[1]);",
    "let failed;",
    "try { await handler(JSON.parse(process.argv[2])); } catch (error) { failed = String(error?.stack ?? error); }",
    "const ms = performance.now() - t0;",
    "const waves = []; let until = -Infinity;",
    "for (const req of [...sent.values()].sort((a, b) => a.start - b.start)) {",
    "  if (req.start < until) waves.at(-1).push(req.op); else waves.push([req.op]);",
    "  until = Math.max(until, req.end);",
    "}",
    "process.stdout.write('\\nCOLD ' + JSON.stringify({ ms, waves, failed }));",
  ].join("\n");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--no-warnings", "--input-type=module", "-e", script, file, JSON.stringify(event)],
    { env, timeout: 60_000 },
  );
  const line = stdout.split("\n").find((l) => l.startsWith("COLD "));
  if (!line) throw new Error(`${file} printed no timing:\n${stdout}`);
  const cold = JSON.parse(line.slice(5)) as Cold & { failed?: string };
  // A first event that throws measures a path no caller takes: fix the bench instead.
  if (cold.failed) throw new Error(`${file} failed its first event: ${cold.failed}`);
  return cold;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const kb = (bytes: number) => Math.round(bytes / 1024);

/** `UpdateItem, UpdateItem + GetItem, PutEvents`: operations by wave. */
const requestsOf = (waves: Waves) =>
  waves.map((wave) => wave.map((op) => op.replace(/^.*\./, "")).join(" + ")).join(", ") || "none";

export async function benchBundles(): Promise<Measurement[]> {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const fns = await functionsToMeasure();
  const built = new Map<string, { fn: Built; baseline: Built }>();
  for (const fn of fns) {
    const baselineEntry = join(OUT, `baseline-${fn.publishes ? "publishing" : "reading"}.ts`);
    await writeFile(baselineEntry, baselineSource(fn.publishes));
    built.set(fn.handler, {
      fn: await build(join(ROOT, "functions", `${fn.handler}.ts`), join(OUT, `${fn.handler}.mjs`)),
      baseline: await build(baselineEntry, join(OUT, `baseline-${fn.publishes}.mjs`)),
    });
  }
  // The same tool with the SDK left to the runtime (resolved from node_modules, as Lambda's
  // runtime copy would be): the other side of the bundling decision in stacks/bundling.ts.
  const sdkExternal = await build(
    join(ROOT, "functions/tools/readability_analyzer.ts"),
    join(OUT, "sdk-external/readability_analyzer.mjs"),
    ["@aws-sdk/*"],
  );

  const db = await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const credentials = { accessKeyId: "bench", secretAccessKey: "bench" };
  const busServer = await startEventBridgeServer(bus, { credentials });
  const measurements: Measurement[] = [];
  const cold = new Map<string, { fn: number[]; baseline: number[]; waves: Waves }>();
  const external: number[] = [];
  try {
    const dynamodb = localDynamoDbClient(db.endpoint);
    await ensureTable(dynamodb, TABLE);
    await localEventBridgeClient({ bus }).send(new CreateEventBusCommand({ Name: BUS }));
    const adminKey = `bench-admin-key-${randomUUID()}`;
    const setup: Setup = {
      calls: new DynamoCallStore({
        client: DynamoDBDocumentClient.from(dynamodb),
        tableName: TABLE,
      }),
      adminKey,
    };
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: busServer.endpoint,
      TOOLBUS_TABLE: TABLE,
      TOOLBUS_BUS: BUS,
      TOOLBUS_CONFIG: JSON.stringify({ stage: "bench" }),
      TOOLBUS_ADMIN_KEY: adminKey,
    };
    // Rounds interleave every function with its baseline, so drift on a shared machine
    // lands on both sides of each ratio.
    for (let round = 0; round < ROUNDS; round++) {
      for (const fn of fns) {
        const pair = built.get(fn.handler);
        if (!fn.event || !pair) continue;
        const times = cold.get(fn.handler) ?? { fn: [], baseline: [], waves: [] };
        const first = await coldStart(pair.fn.file, await fn.event(setup), env);
        const baseline = await coldStart(pair.baseline.file, { waves: first.waves }, env);
        times.fn.push(first.ms);
        times.baseline.push(baseline.ms);
        times.waves = first.waves;
        cold.set(fn.handler, times);
      }
      const readability = fns.find((fn) => fn.handler === "tools/readability_analyzer");
      if (readability?.event)
        external.push((await coldStart(sdkExternal.file, await readability.event(setup), env)).ms);
    }
  } finally {
    await busServer.close();
    bus.close();
    await db.stop();
  }

  const rows: string[] = [];
  for (const fn of fns) {
    const pair = built.get(fn.handler);
    if (!pair) continue;
    const budget = bundleBudgetKB(fn.handler);
    measurements.push(
      measurement(
        `bundle ${fn.handler}`,
        "KB",
        kb(pair.fn.bytes),
        { name: "budget", value: budget },
        "lower",
      ),
    );
    const times = cold.get(fn.handler);
    const fnMs = times ? median(times.fn) : Number.NaN;
    const baseMs = times ? median(times.baseline) : Number.NaN;
    if (times) {
      measurements.push(
        measurement(
          `cold start ${fn.handler} (import + first event)`,
          "ms",
          fnMs,
          { name: `SDK clients only, ${kb(pair.baseline.bytes)} KB`, value: baseMs },
          "lower",
        ),
      );
    }
    rows.push(
      `| \`${fn.handler}\` | ${kb(pair.fn.bytes)} KB${
        pair.fn.lazyBytes > 0 ? ` (+${kb(pair.fn.lazyBytes)} KB lazy)` : ""
      } | ${budget} KB | ${
        times
          ? `${fnMs.toFixed(0)} ms | ${baseMs.toFixed(0)} ms | ${(fnMs / baseMs).toFixed(2)}x`
          : "— | — | —"
      } | ${times ? requestsOf(times.waves) : "—"} | ${pair.fn.top.map(([name, bytes]) => `${name} ${kb(bytes)}`).join(", ")} |`,
    );
  }
  const readability = cold.get("tools/readability_analyzer");
  if (readability && external.length > 0) {
    measurements.push(
      measurement(
        "cold start tools/readability_analyzer, SDK external (from node_modules)",
        "ms",
        median(external),
        { name: "SDK bundled", value: median(readability.fn) },
        "lower",
      ),
    );
  }
  const report = [
    "# Lambda bundles",
    "",
    `Each function built as SST builds it; cold start is the median of ${ROUNDS} fresh \`node\` processes`,
    "importing the bundle and handling its first real event against DynamoDB Local and the local bus",
    "(a tool claims a recorded call, runs it, stores the result and publishes it; the API answers an",
    "authenticated `GET /v1/tools`), next to a baseline bundle of only the SDK clients it holds that",
    "sends the same AWS requests (the column *first event's requests*; `+` = sent together). The",
    "ratio is what our code costs to load and run. Reproduce with `npm run bench -- bundles`.",
    "A bundle's size is what a cold start loads: a function split into chunks counts its entry and",
    "the chunks it imports statically; those loaded on a path's first use are shown apart (lazy).",
    "",
    "| function | bundle | budget | cold start | baseline | ratio | first event's requests | largest contributors (KB) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `With the SDK external (resolved from node_modules, as from Lambda's runtime), \`tools/readability_analyzer\` is ${kb(sdkExternal.bytes)} KB` +
      (readability && external.length > 0
        ? ` and cold-starts in ${median(external).toFixed(0)} ms against ${median(readability.fn).toFixed(0)} ms bundled.`
        : "."),
    "",
  ].join("\n");
  await mkdir(join(ROOT, "bench/results"), { recursive: true });
  await writeFile(join(ROOT, "bench/results/bundles.md"), report);
  process.stdout.write(report);
  return measurements;
}
