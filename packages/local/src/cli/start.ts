import { access } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import {
  busRules,
  createToolbus,
  deploymentFromEnv,
  ensureTable,
  forStage,
  parseStageConfigFrom,
  readStageConfigSource,
  SCHEDULED_JOBS,
  SUBSCRIPTIONS_RULE,
} from "@toolbus/core";
import { deliveryRuleOf } from "@toolbus/core/compose/delivery-rule";
import {
  createLogger,
  InProcessMetrics,
  jsonLines,
  LOG_LEVELS,
  prettyLines,
} from "@toolbus/core/observability";
import { appendAsSoleWriter } from "@toolbus/core/store/dynamodb";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { z } from "zod";
import type { LocalFunction } from "../bus";
import { stopOnSignals } from "../dynamodb/signals";
import { localAdminKey } from "../runtime/admin-key";
import { type ApiServer, serveApi } from "../runtime/api-server";
import { startLocalSystem } from "../runtime/system";

const HELP = `Usage: npm start -- [options]

Runs Toolbus on this machine: DynamoDB Local, the local EventBridge-compatible bus, every
tool's handler and the HTTPS API.

  --memory            keep DynamoDB in memory (default: on disk under the state dir)
  --state-dir <dir>   where local.json, the admin key and the database live (default: .toolbus)
  --port <port>       API port (default: TOOLBUS_PORT or 8787; 0 picks a free one)
  --host <address>    where the API listens (default: TOOLBUS_HOST or 127.0.0.1; 0.0.0.0 in a
                      container, so its port mapping reaches it)
  --bus-port <port>   port for the local bus (default: a free port)
  --stage <name>      stage name; the bus and table are toolbus-<stage> (default: local)
  --log-format <f>    pretty (one readable line per call step, default) or json (the JSON lines
                      Lambda writes); also TOOLBUS_LOG_FORMAT
  --help              show this help

Configuration: TOOLBUS_CONFIG (JSON) or TOOLBUS_CONFIG_FILE; TOOLBUS_ADMIN_KEY, else a key is
generated on first run and kept in <state dir>/admin-key.
`;

const port = z.coerce.number().int().min(0).max(65_535);
const options = z.object({
  memory: z.boolean().default(false),
  stateDir: z.string().min(1).default(".toolbus"),
  port: port.default(8787),
  host: z.union([z.ipv4(), z.ipv6()]).default("127.0.0.1"),
  busPort: port.optional(),
  stage: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, "stage names are lowercase letters, digits and dashes")
    .default("local"),
  logFormat: z.enum(["pretty", "json"]).default("pretty"),
});

const logLevel = z.enum(LOG_LEVELS).optional();

const FUNCTIONS_DIR = resolve(import.meta.dirname, "../../../../functions");

async function importFunction<T>(handler: string): Promise<T> {
  const file = resolve(FUNCTIONS_DIR, `${handler}.ts`);
  await access(file).catch(() => {
    throw new Error(`functions/${handler}.ts is missing: every rule needs its handler.`);
  });
  return (await import(pathToFileURL(file).href)) as T;
}

/** The same entry points Lambda runs, loaded from functions/ for every rule of the table. */
async function loadHandlers(rules: readonly { handler: string }[]) {
  const handlers: Record<string, LocalFunction> = {};
  for (const rule of rules) {
    handlers[rule.handler] = (
      await importFunction<{ handler: LocalFunction }>(rule.handler)
    ).handler;
  }
  return handlers;
}

function readOptions() {
  const { values } = parseArgs({
    options: {
      memory: { type: "boolean" },
      "state-dir": { type: "string" },
      port: { type: "string" },
      host: { type: "string" },
      "bus-port": { type: "string" },
      stage: { type: "string" },
      "log-format": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const parsed = options.safeParse({
    memory: values.memory,
    stateDir: values["state-dir"],
    port: values.port ?? process.env.TOOLBUS_PORT,
    host: values.host ?? process.env.TOOLBUS_HOST,
    busPort: values["bus-port"],
    stage: values.stage,
    logFormat: values["log-format"] ?? process.env.TOOLBUS_LOG_FORMAT,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  --${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid options:\n${problems.join("\n")}`);
  }
  return parsed.data;
}

/**
 * The stage configuration exactly as Lambda reads it (core's readStageConfigSource: the JSON
 * in TOOLBUS_CONFIG or the file TOOLBUS_CONFIG_FILE names, never both), with this run's stage
 * filled in, validated before anything starts. The handlers then read it from TOOLBUS_CONFIG.
 */
function applyStageConfig(stage: string): string {
  const given = readStageConfigSource(process.env);
  const value = forStage(given.value, stage);
  parseStageConfigFrom({ value, source: given.source });
  process.env.TOOLBUS_CONFIG = JSON.stringify(value);
  delete process.env.TOOLBUS_CONFIG_FILE;
  return given.source;
}

/**
 * Supervisors that signal only the process they started (npm, a container's PID 1, systemd with
 * KillMode=process) may end our parent without passing the signal on: a process left without
 * its parent stops as if it had been told to.
 */
function stopWhenOrphaned(stop: () => void): void {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    // Once: a second signal would mean "exit now" and cut the stop short.
    clearInterval(watch);
    stop();
  }, 1_000);
  watch.unref();
}

async function main(): Promise<void> {
  const config = readOptions();
  const stateDir = resolve(config.stateDir);
  const configSource = applyStageConfig(config.stage);
  console.log("Starting Toolbus locally...");
  // In memory, a DynamoDB Local that died took the table and the catalog with it.
  let makeAgain: (() => Promise<void>) | undefined;
  const system = await startLocalSystem({
    stateDir,
    memory: config.memory,
    stage: config.stage,
    ...(config.busPort !== undefined ? { busPort: config.busPort } : {}),
    onDynamoDbRestart: async (lostData) => {
      if (lostData) await makeAgain?.();
    },
  });
  let api: ApiServer | undefined;
  let settled: (() => Promise<void>) | undefined;
  stopOnSignals(async () => {
    await api?.close();
    // Results already given to callers are announced before the bus stops.
    await settled?.();
    await system.stop();
  });
  stopWhenOrphaned(() => process.kill(process.pid, "SIGTERM"));

  // The handlers and the API read their deployment from the environment, exactly as on
  // Lambda; only the endpoints point at this machine.
  const admin = await localAdminKey(stateDir);
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: system.busServer.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: system.busServer.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: system.dynamodb.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: system.busServer.endpoint,
    TOOLBUS_TABLE: `toolbus-${system.stage}`,
    TOOLBUS_BUS: system.busName,
    // As the stack names it to the API and the sweeper: on only while a subscription exists.
    TOOLBUS_SUBSCRIPTIONS_RULE: SUBSCRIPTIONS_RULE,
    TOOLBUS_ADMIN_KEY: admin.key,
    // The key connection tokens are sealed with: made (mode 0600) with the first connection.
    TOOLBUS_CONNECTION_KEY_FILE:
      process.env.TOOLBUS_CONNECTION_KEY_FILE ?? join(stateDir, "connection-key"),
  });
  // Our own process reaches the bus without a socket (the SDK client is the same, its
  // transport is not); the HTTP endpoint serves everyone else. This process alone writes the
  // table, so it appends run logs with plain puts; appends made while one is under way share
  // the next batch. None waits for company: a finished call's append is on its answer's path.
  // Logs as Lambda writes them, or readable; metrics kept here for GET /v1/metrics.
  const deployment = deploymentFromEnv(process.env, {
    eventBridge: system.eventBridge,
    appendLog: appendAsSoleWriter,
    log: createLogger({
      service: "toolbus",
      level: logLevel.parse(process.env.TOOLBUS_LOG_LEVEL),
      fields: { stage: system.stage },
      sink: config.logFormat === "json" ? jsonLines(process.stdout) : prettyLines(process.stdout),
    }),
    metrics: new InProcessMetrics(),
  });
  await ensureTable(deployment.dynamodb, deployment.tableName);

  const rules = busRules(builtinTools.map((tool) => tool.spec.id));
  await system.wire(rules, await loadHandlers(rules));
  // Wiring puts every rule enabled: the subscriptions rule is set now as the sweeper would set
  // it within a minute, before the last run's undelivered events are replayed below.
  await deliveryRuleOf(deployment)?.reconcile();
  await system.schedule(SCHEDULED_JOBS, await loadHandlers(SCHEDULED_JOBS));
  // Rules the last run kept whose handler is gone (a tool removed since) deliver nowhere.
  const dropped = system.bus.dropRulesWithoutHandlers();
  if (dropped.length > 0) console.log(`Dropped rules whose handler is gone: ${dropped.join(", ")}`);
  // Events the last run accepted but was killed before delivering: delivered now.
  const replayed = system.bus.replayJournal();
  const toolbus = createToolbus(deployment, {
    tools: builtinTools,
    toolsets: builtinToolsets,
    capabilities: builtinCapabilities,
  });
  const seeded = await toolbus.seed();
  // Verified, not assumed: the network is probed, a set token is tried.
  const capabilities = await toolbus.refreshCapabilities({ verify: true });
  makeAgain = async () => {
    await ensureTable(deployment.dynamodb, deployment.tableName);
    await toolbus.seed();
    await toolbus.refreshCapabilities({ verify: true });
  };

  const entry = await importFunction<{
    app: Parameters<typeof serveApi>[0];
    settled: () => Promise<void>;
  }>("api");
  const { app } = entry;
  settled = entry.settled;
  api = await serveApi(app, { port: config.port, host: config.host });
  await system.writeStateFile({ api: api.url });

  // Shown whole only when it was just made; otherwise whoever set it has it, and a service
  // manager's logs would keep it.
  const shownKey =
    admin.source === "generated"
      ? `${admin.key}  (generated, kept in ${admin.file})`
      : `${maskKey(admin.key)}  (${admin.source === "environment" ? "from TOOLBUS_ADMIN_KEY" : `kept in ${admin.file}`})`;
  console.log(
    [
      `Toolbus is running (stage ${system.stage}).`,
      `  API:             ${api.url}  (docs: ${api.url}/docs)`,
      `  DynamoDB Local:  ${system.dynamodb.endpoint}${config.memory ? " (in memory)" : ""}`,
      `  EventBridge:     ${system.busServer.endpoint} (bus ${system.busName})${replayed > 0 ? `, ${replayed} undelivered events of the last run delivered again` : ""}`,
      `  Catalog:         ${builtinTools.length} tools, ${rules.length} bus rules (${seeded.written.length} catalog entries written)`,
      `  Capabilities:    ${capabilities.map((c) => `${c.name} ${c.available ? "yes" : "no"}`).join(", ")}`,
      `  Admin key:       ${shownKey}`,
      `  Configuration:   ${configSource}`,
      `  Endpoints file:  ${system.stateFile}`,
      "Try:",
      `  curl -s ${api.url}/v1/tools -H "Authorization: Bearer ${admin.file ? `$(cat ${admin.file})` : "$TOOLBUS_ADMIN_KEY"}"`,
      `  npx --no-install toolbus call readability_analyzer --run try-1 --input '{"text":"The cat sat on the mat."}'`,
      "Press Ctrl-C to stop.",
    ].join("\n"),
  );
}

/** The first and last four characters: enough to tell keys apart, not to use one. */
function maskKey(key: string): string {
  return key.length <= 12 ? "…" : `${key.slice(0, 4)}…${key.slice(-4)}`;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  // The DynamoDB Local watchdog ends the JVM when this process goes.
  process.exit(1);
});
