import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import { EVENT_SOURCE, ensureTable } from "@toolbus/core";
import { LocalEventBus, localEventBridgeClient, startEventBridgeServer } from "@toolbus/local/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import { bundleBudgetKB } from "../stacks/budgets";
import { sstEsbuildOptions } from "../stacks/bundling";
import { type Measurement, measurement } from "./stats";

/**
 * Each function's bundle as SST builds it (the same esbuild and options): its size against
 * its budget, what weighs most in it (esbuild's metafile), and its cold start: a fresh `node`
 * importing it and handling one real event against DynamoDB Local, against a baseline bundle
 * that holds only the SDK clients the function uses and makes its first DynamoDB call.
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

function scheduled(toolId: string, implementation: "builtin" | "http" | "mcp"): Event {
  const callId = `bench-${randomUUID()}`;
  const scheduledAt = new Date().toISOString();
  return {
    source: EVENT_SOURCE,
    "detail-type": "ToolCallScheduled",
    time: scheduledAt,
    detail: {
      eventKey: `${callId}#scheduled`,
      parentRunId: "bench-run",
      callId,
      toolId,
      toolset: toolId,
      implementation,
      input: {},
      requestedBy: { id: "bench", role: "member" },
      scheduledAt,
    },
  };
}

const health = {
  version: "2.0",
  routeKey: "$default",
  rawPath: "/health",
  rawQueryString: "",
  headers: { host: "api.example.com" },
  requestContext: {
    http: { method: "GET", path: "/health", protocol: "HTTP/1.1", sourceIp: "127.0.0.1" },
    domainName: "api.example.com",
    requestId: "r-1",
    routeKey: "$default",
    stage: "$default",
  },
  isBase64Encoded: false,
};

interface Fn {
  handler: string;
  /** The first event it handles; none for the seed, which runs once per deploy. */
  event?: () => Event;
  /** SDK clients it holds: every function reads DynamoDB; most also publish. */
  publishes: boolean;
}

async function functionsToMeasure(): Promise<Fn[]> {
  const tools = (await readdir(join(ROOT, "functions/tools"))).map((f) => f.replace(/\.ts$/, ""));
  return [
    { handler: "api", event: () => health, publishes: true },
    {
      handler: "recorder",
      event: () => scheduled("readability_analyzer", "builtin"),
      publishes: false,
    },
    { handler: "sweeper", event: () => ({ source: "aws.events" }), publishes: true },
    { handler: "seed", publishes: true },
    { handler: "external/http", event: () => scheduled("bench_http", "http"), publishes: true },
    { handler: "external/mcp", event: () => scheduled("bench_mcp", "mcp"), publishes: true },
    ...tools.map((tool) => ({
      handler: `tools/${tool}`,
      event: () => scheduled(tool, "builtin"),
      publishes: true,
    })),
  ];
}

/** The floor: the SDK clients a function holds, built as SST builds it, making one GetItem. */
function baselineSource(publishes: boolean): string {
  return [
    `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";`,
    `import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";`,
    publishes ? `import { EventBridgeClient } from "@aws-sdk/client-eventbridge";` : "",
    `import { DYNAMODB_CLIENT_OPTIONS, SDK_CLIENT_OPTIONS } from "${join(ROOT, "packages/core/src/sdk-options.ts")}";`,
    `const doc = DynamoDBDocumentClient.from(new DynamoDBClient(DYNAMODB_CLIENT_OPTIONS));`,
    publishes ? "export const bus = new EventBridgeClient(SDK_CLIENT_OPTIONS);" : "",
    "export const handler = () => doc.send(new GetCommand({",
    "  TableName: process.env.TOOLBUS_TABLE, Key: { pk: 'bench#baseline', sk: 'none' } }));",
  ].join("\n");
}

interface Built {
  file: string;
  bytes: number;
  /** Largest contributors: packages (or our source folders) by bytes in the output. */
  top: Array<[string, number]>;
}

async function build(entry: string, outfile: string, external: string[] = []): Promise<Built> {
  const options = sstEsbuildOptions(entry, outfile);
  const result = await esbuild.build({
    ...options,
    absWorkingDir: ROOT,
    external: [...options.external, ...external],
  });
  const output = Object.values(result.metafile.outputs)[0];
  const byPackage = new Map<string, number>();
  for (const [path, input] of Object.entries(output?.inputs ?? {})) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
    const key = pkg ?? relative(ROOT, join(ROOT, path)).split("/").slice(0, 3).join("/");
    byPackage.set(key, (byPackage.get(key) ?? 0) + input.bytesInOutput);
  }
  const top = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 5);
  return { file: outfile, bytes: (await stat(outfile)).size, top };
}

/** ms from the start of a fresh node's script to the end of its first event. */
async function coldStart(file: string, event: Event, env: NodeJS.ProcessEnv): Promise<number> {
  const script = [
    "const t0 = performance.now();",
    "const { handler } = await import(process.argv[1]);",
    "try { await handler(JSON.parse(process.argv[2])); } catch {}",
    "process.stdout.write('\\nCOLD ' + (performance.now() - t0));",
  ].join("\n");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--no-warnings", "--input-type=module", "-e", script, file, JSON.stringify(event)],
    { env, timeout: 60_000 },
  );
  const line = stdout.split("\n").find((l) => l.startsWith("COLD "));
  if (!line) throw new Error(`${file} printed no timing:\n${stdout}`);
  return Number(line.slice(5));
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const kb = (bytes: number) => Math.round(bytes / 1024);

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
  const cold = new Map<string, { fn: number[]; baseline: number[] }>();
  const external: number[] = [];
  try {
    await ensureTable(localDynamoDbClient(db.endpoint), TABLE);
    await localEventBridgeClient({ bus }).send(new CreateEventBusCommand({ Name: BUS }));
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
      TOOLBUS_ADMIN_KEY: `bench-admin-key-${randomUUID()}`,
    };
    // Rounds interleave every function with its baseline, so drift on a shared machine
    // lands on both sides of each ratio.
    for (let round = 0; round < ROUNDS; round++) {
      for (const fn of fns) {
        const pair = built.get(fn.handler);
        if (!fn.event || !pair) continue;
        const times = cold.get(fn.handler) ?? { fn: [], baseline: [] };
        times.fn.push(await coldStart(pair.fn.file, fn.event(), env));
        times.baseline.push(await coldStart(pair.baseline.file, {}, env));
        cold.set(fn.handler, times);
      }
      const readability = fns.find((fn) => fn.handler === "tools/readability_analyzer");
      if (readability?.event)
        external.push(await coldStart(sdkExternal.file, readability.event(), env));
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
      `| \`${fn.handler}\` | ${kb(pair.fn.bytes)} KB | ${budget} KB | ${
        times
          ? `${fnMs.toFixed(0)} ms | ${baseMs.toFixed(0)} ms | ${(fnMs / baseMs).toFixed(2)}x`
          : "— | — | —"
      } | ${pair.fn.top.map(([name, bytes]) => `${name} ${kb(bytes)}`).join(", ")} |`,
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
    "importing the bundle and handling one event against DynamoDB Local, next to a baseline bundle of",
    "only the SDK clients it holds making one GetItem. Reproduce with `npm run bench -- bundles`.",
    "",
    "| function | bundle | budget | cold start | baseline | ratio | largest contributors (KB) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
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
