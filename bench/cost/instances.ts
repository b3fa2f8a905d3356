import { randomUUID } from "node:crypto";
import { Worker } from "node:worker_threads";
import { emptySdkCounts, operationRow, type SdkCounts } from "./meter";
import type { FromWorker, ToWorker, WorkerData } from "./worker";

/** What one deployed function did, over the invocations since the last reset. */
export interface FunctionCounts {
  invocations: number;
  errors: number;
  /** Sum of measured durations (ms). */
  durationMs: number;
  /** Sum of billed durations: each invocation rounded up to 1 ms. */
  billedMs: number;
  /** Bytes the function wrote to stdout and stderr (console lines with Lambda's prefix). */
  logBytes: number;
  /** Bytes of Lambda's own START, END and REPORT lines. */
  platformLogBytes: number;
  /** Log lines (events) in all: CloudWatch stores each as one event. */
  logEvents: number;
  sdk: SdkCounts;
}

export interface FunctionSpec {
  /** The wiring table's handler id, or `api`: also the entry's path under functions/. */
  handler: string;
  /** The Lambda function name the harness gives it. */
  name: string;
  memoryMB: number;
  timeoutSeconds: number;
  /** The environment the stack gives the function, plus the local endpoints. */
  env: Record<string, string>;
  /** X-Ray active tracing adds a segment to each REPORT line. */
  traced: boolean;
  /** Whether Lambda writes its START, END and REPORT lines (the stack's system log level). */
  platformLines: boolean;
}

interface Instance {
  worker: Worker;
  busy: boolean;
}

type Result = Extract<FromWorker, { type: "result" }>;

/** A REPORT line as Lambda writes it, with this invocation's figures. */
function platformLines(spec: FunctionSpec, requestId: string, durationMs: number): string[] {
  const billed = Math.max(1, Math.ceil(durationMs));
  const trace = spec.traced
    ? `XRAY TraceId: 1-6747a1b2-${randomUUID().replaceAll("-", "").slice(0, 24)}\tSegmentId: ${randomUUID().replaceAll("-", "").slice(0, 16)}\tSampled: true\t`
    : "";
  return [
    `START RequestId: ${requestId} Version: $LATEST\n`,
    `END RequestId: ${requestId}\n`,
    `REPORT RequestId: ${requestId}\tDuration: ${durationMs.toFixed(2)} ms\tBilled Duration: ${billed} ms\tMemory Size: ${spec.memoryMB} MB\tMax Memory Used: 112 MB\t${trace}\n`,
  ];
}

/**
 * A function's warm instances: each a worker thread running the entry point with the
 * function's own environment, one invocation at a time. When all are busy another starts, as
 * Lambda scales out; nothing is shared between instances or between functions.
 */
export class FunctionInstances {
  private readonly instances: Instance[] = [];
  private readonly waiting: Array<(instance: Instance) => void> = [];
  private counts: FunctionCounts = FunctionInstances.empty();
  private nextId = 0;
  private readonly pending = new Map<number, (message: FromWorker) => void>();
  /** Invocations accepted and not finished: the harness waits for none before counting. */
  inFlight = 0;

  constructor(
    readonly spec: FunctionSpec,
    private readonly options: { maxInstances: number; echoLogs: boolean },
  ) {}

  static empty(): FunctionCounts {
    return {
      invocations: 0,
      errors: 0,
      durationMs: 0,
      billedMs: 0,
      logBytes: 0,
      platformLogBytes: 0,
      logEvents: 0,
      sdk: emptySdkCounts(),
    };
  }

  /** Starts one instance now, so the first measured invocation finds it warm. */
  async start(): Promise<void> {
    const instance = await this.spawn();
    this.release(instance);
  }

  private async spawn(): Promise<Instance> {
    const data: WorkerData = {
      entry: new URL(`../../functions/${this.spec.handler}.ts`, import.meta.url).href,
      exportName: "handler",
    };
    // A worker thread does not inherit the TypeScript loader: it registers it, then loads ours.
    const source = JSON.stringify(new URL("./worker.ts", import.meta.url).href);
    const bootstrap = `import("tsx/esm/api").then(({ register }) => { register(); return import(${source}); });`;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: data,
      env: this.spec.env,
      stdout: true,
      stderr: true,
    });
    const instance: Instance = { worker, busy: true };
    const count = (chunk: Buffer) => {
      this.counts.logBytes += chunk.length;
      // Lines, as CloudWatch stores them: one event each.
      for (const byte of chunk) if (byte === 10) this.counts.logEvents += 1;
      if (this.options.echoLogs) process.stderr.write(`[${this.spec.handler}] ${chunk}`);
    };
    worker.stdout.on("data", count);
    worker.stderr.on("data", count);
    await new Promise<void>((resolve, reject) => {
      worker.once("error", reject);
      worker.on("message", (message: FromWorker) => {
        if (message.type === "ready") resolve();
        else if (message.type === "failed-to-load") {
          reject(new Error(`${this.spec.handler} did not load: ${message.message}`));
        } else this.pending.get(message.id)?.(message);
      });
    });
    this.instances.push(instance);
    return instance;
  }

  private release(instance: Instance): void {
    const next = this.waiting.shift();
    if (next) next(instance);
    else instance.busy = false;
  }

  private async acquire(): Promise<Instance> {
    const idle = this.instances.find((instance) => !instance.busy);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    if (this.instances.length < this.options.maxInstances) return this.spawn();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private request(instance: Instance, message: ToWorker & { id: number }): Promise<FromWorker> {
    return new Promise((resolve) => {
      this.pending.set(message.id, (answer) => {
        this.pending.delete(message.id);
        resolve(answer);
      });
      instance.worker.postMessage(message);
    });
  }

  /** One invocation, as Lambda runs it: the handler's value, or its error as Lambda reports one. */
  async invoke(event: unknown): Promise<Result> {
    this.inFlight += 1;
    try {
      const instance = await this.acquire();
      const requestId = randomUUID();
      const result = (await this.request(instance, {
        type: "invoke",
        id: this.nextId++,
        requestId,
        event,
      })) as Result;
      this.release(instance);
      const c = this.counts;
      c.invocations += 1;
      if (result.error) c.errors += 1;
      c.durationMs += result.durationMs;
      c.billedMs += Math.max(1, Math.ceil(result.durationMs));
      const lines = this.spec.platformLines
        ? platformLines(this.spec, requestId, result.durationMs)
        : [];
      c.platformLogBytes += lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
      c.logEvents += lines.length;
      return result;
    } finally {
      this.inFlight -= 1;
    }
  }

  /** The counts since the last reset, with every instance's SDK counts added up. */
  async collect(): Promise<FunctionCounts> {
    const sdk = emptySdkCounts();
    for (const instance of this.instances) {
      const answer = (await this.request(instance, { type: "counts", id: this.nextId++ })) as {
        counts: SdkCounts;
      };
      addSdkCounts(sdk, answer.counts);
    }
    return { ...this.counts, sdk };
  }

  reset(): void {
    this.counts = FunctionInstances.empty();
    for (const instance of this.instances) instance.worker.postMessage({ type: "reset" });
  }

  async stop(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.worker.terminate()));
  }
}

export function addSdkCounts(into: SdkCounts, from: SdkCounts): void {
  for (const [key, row] of Object.entries(from.dynamodb)) {
    const target = operationRow(into.dynamodb, key);
    target.requests += row.requests;
    target.readUnits += row.readUnits;
    target.writeUnits += row.writeUnits;
    target.failed += row.failed;
    target.estimatedUnits += row.estimatedUnits;
    target.items += row.items;
  }
  into.eventbridge.putEventsRequests += from.eventbridge.putEventsRequests;
  into.eventbridge.entries += from.eventbridge.entries;
  into.eventbridge.billedEvents += from.eventbridge.billedEvents;
  into.eventbridge.bytes += from.eventbridge.bytes;
  into.lambdaInvokes += from.lambdaInvokes;
}
