import { performance } from "node:perf_hooks";
import { format } from "node:util";
import { parentPort, workerData } from "node:worker_threads";
import { emptySdkCounts, installSdkMeter, meterOverhead, type SdkCounts } from "./meter";

/**
 * One warm Lambda function instance: a thread with its own environment and module graph that
 * imports one entry point of functions/ and runs one invocation at a time, as a container does.
 * It reports each invocation's duration, and on request what its SDK clients asked of AWS.
 */

export interface WorkerData {
  /** The entry module's URL. */
  entry: string;
  /** The export to call: `handler`. */
  exportName: string;
}

export type ToWorker =
  | { type: "invoke"; id: number; requestId: string; event: unknown }
  | { type: "counts"; id: number }
  | { type: "reset" };

export type FromWorker =
  | { type: "ready" }
  | { type: "failed-to-load"; message: string }
  | {
      type: "result";
      id: number;
      durationMs: number;
      value?: unknown;
      error?: { errorType: string; errorMessage: string };
    }
  | { type: "counts"; id: number; counts: SdkCounts };

const port = parentPort;
if (!port) throw new Error("The cost harness's function instance runs in a worker thread.");
const data = workerData as WorkerData;

let counts = emptySdkCounts();
installSdkMeter(() => counts);

// Lambda's Node.js runtime prefixes every console line with the time, the request and the level;
// a direct write to stdout goes out as it is.
let requestId = "";
const consoleLevels = { log: "INFO", info: "INFO", warn: "WARN", error: "ERROR", debug: "DEBUG" };
for (const [method, level] of Object.entries(consoleLevels)) {
  (console as unknown as Record<string, (...args: unknown[]) => void>)[method] = (...args) => {
    const stream = level === "ERROR" || level === "WARN" ? process.stderr : process.stdout;
    stream.write(`${new Date().toISOString()}\t${requestId}\t${level}\t${format(...args)}\n`);
  };
}

function lambdaContext(id: string) {
  const deadline = Date.now() + Number(process.env.COST_TIMEOUT_SECONDS ?? 30) * 1000;
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "function";
  return {
    awsRequestId: id,
    functionName: name,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? "128",
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: "2026/01/01/[$LATEST]0",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

async function main(): Promise<void> {
  let handler: (event: unknown, context: unknown) => unknown;
  try {
    const module = (await import(data.entry)) as Record<string, unknown>;
    const exported = module[data.exportName];
    if (typeof exported !== "function") throw new Error(`${data.entry} exports no handler`);
    handler = exported as typeof handler;
  } catch (error) {
    port?.postMessage({ type: "failed-to-load", message: String(error) } satisfies FromWorker);
    return;
  }
  port?.on("message", async (message: ToWorker) => {
    if (message.type === "reset") {
      counts = emptySdkCounts();
      return;
    }
    if (message.type === "counts") {
      port.postMessage({ type: "counts", id: message.id, counts } satisfies FromWorker);
      return;
    }
    requestId = message.requestId;
    const started = performance.now();
    const overheadBefore = meterOverhead.ms;
    // The function's own time: the cost model's reads made meanwhile are not billed to it.
    const elapsed = () => performance.now() - started - (meterOverhead.ms - overheadBefore);
    try {
      const value = await handler(message.event, lambdaContext(message.requestId));
      const durationMs = elapsed();
      port.postMessage({ type: "result", id: message.id, durationMs, value } satisfies FromWorker);
    } catch (error) {
      const durationMs = elapsed();
      const failure = error as Error;
      port.postMessage({
        type: "result",
        id: message.id,
        durationMs,
        error: { errorType: failure?.name ?? "Error", errorMessage: String(failure?.message) },
      } satisfies FromWorker);
    }
  });
  port?.postMessage({ type: "ready" } satisfies FromWorker);
}

void main();
