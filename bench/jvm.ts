/**
 * jvm: DynamoDB Local's JVM options against request latency under load. DynamoDB Local is
 * started in memory (as `npm start -- --memory` starts it) once per option set, and each gets
 * the same warm-up and the same workload: the floor of a persisted call, one conditional
 * PutItem of a ~1.4 KB item then one UpdateItem setting a ~1 KB attribute, through the
 * project's own AWS SDK client. Measured: p50 and p99 of a pair with one client, pairs per
 * second with CONCURRENT clients, and the JVM's CPU time (user + system, from /proc) per 1,000
 * pairs, during the warm-up and under load, and how much of it the JIT compiler threads took
 * (from /proc/<pid>/task). Then the load goes on until the compilers are done, and p50,
 * pairs/s and CPU are measured again.
 *
 * Every set runs REPEATS times, interleaved (A B C C B A), so that a slow spell of a shared
 * machine does not land on one set only, after one unmeasured start that takes the cold-start
 * cost of the whole process; figures are the mean of the repeats, and the current
 * options' second start against its first shows the run-to-run noise of the same run.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DEFAULT_JVM_OPTIONS,
  localDynamoDbClient,
  startDynamoDbLocal,
} from "../packages/local/src/dynamodb";
import { ensureKeysOnlyTable, persistCall } from "./persisted-call";
import { type Measurement, measurement, percentile, runConcurrently } from "./stats";

interface OptionSet {
  name: string;
  options: readonly string[];
}

/** The first is the baseline: what the launcher uses today. */
const OPTION_SETS: OptionSet[] = [
  { name: "current (C1 only, SerialGC)", options: DEFAULT_JVM_OPTIONS },
  { name: "tiered C1+C2, SerialGC", options: ["-XX:+UseSerialGC"] },
  { name: "C1 only, ParallelGC", options: ["-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC"] },
  { name: "JVM defaults (tiered C1+C2, G1)", options: [] },
];

const REPEATS = 2;
/** Pairs, i.e. twice as many requests: C2 compiles a method after thousands of invocations. */
const WARM_UP_PAIRS = 3_000;
const WARM_UP_CONCURRENCY = 4;
const LATENCY_PAIRS = 1_000;
const THROUGHPUT_PAIRS = 3_000;
const CONCURRENT = 16;
/**
 * Then the load goes on, in chunks, until the compilers are done (their threads take under
 * SETTLED_SHARE of the JVM's CPU over a chunk), and everything is measured again: C2 needs
 * tens of thousands of requests to finish, so the first figures are a short session's and
 * these a long one's.
 */
const SETTLE_CHUNK_PAIRS = 2_000;
const SETTLE_MAX_PAIRS = 30_000;
const SETTLED_SHARE = 0.02;

const TableName = "bench-jvm-calls";
/** A call item as the floor route writes it: keys, a status and its input, ~1.4 KB in all. */
const INPUT = JSON.stringify({ text: "The quick brown fox jumps over the lazy dog. ".repeat(30) });
/** A result of ~1 KB, set by the UpdateItem. */
const RESULT = JSON.stringify({
  status: "succeeded",
  output: "Readability: grade 4.2, 12 sentences. ".repeat(25),
});

interface Figures {
  p50: number;
  p99: number;
  /** Pairs per second with CONCURRENT clients. */
  throughput: number;
  /** JVM CPU ms per 1,000 pairs, with CONCURRENT clients. */
  cpuUnderLoad: number;
  /** JVM CPU ms per 1,000 pairs during the warm-up. */
  cpuWarmUp: number;
  /** CPU ms per 1,000 pairs of the JVM's JIT compiler threads, with CONCURRENT clients. */
  compilerUnderLoad: number;
  /** Pairs served, from the start, before the compilers were done (or SETTLE_MAX_PAIRS). */
  settledAfter: number;
  /** The same three once the compilers are done. */
  settledP50: number;
  settledThroughput: number;
  settledCpu: number;
}

function progress(message: string): void {
  console.error(`[jvm] ${message}`);
}

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime from a /proc stat file, in ms. */
function statCpuMs(stat: string): number {
  // The command name is in parentheses and may hold spaces: count fields after the last one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1000;
}

/** CPU time of `pid` so far, in ms; every thread of the process counts (C2's included). */
async function cpuMs(pid: number): Promise<number> {
  return statCpuMs(await readFile(`/proc/${pid}/stat`, "utf8"));
}

/** CPU time so far of each JIT compiler thread alive now ("C1 CompilerThre", "C2 ..."), by id. */
async function compilerThreadsCpuMs(pid: number): Promise<Map<string, number>> {
  const threads = new Map<string, number>();
  for (const task of await readdir(`/proc/${pid}/task`)) {
    try {
      const comm = (await readFile(`/proc/${pid}/task/${task}/comm`, "utf8")).trim();
      if (/^C[12] Compiler/.test(comm)) {
        threads.set(task, statCpuMs(await readFile(`/proc/${pid}/task/${task}/stat`, "utf8")));
      }
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * CPU time the compiler threads spent between two readings. The JVM starts and retires
 * compiler threads as its queue grows and shrinks; a thread retired in between takes its time
 * with it, so this is a lower bound.
 */
function compilerCpuBetween(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [task, ms] of after) total += ms - (before.get(task) ?? 0);
  return total;
}

function pair(client: DynamoDBClient, runId: string, i: number): Promise<void> {
  return persistCall(client, TableName, {
    runId,
    callId: String(i),
    input: INPUT,
    result: () => RESULT,
  });
}

/** Repeat 0 only primes (a JVM start and a warm-up, unmeasured). */
async function measureSet(set: OptionSet, repeat: number): Promise<Figures | undefined> {
  const db = await startDynamoDbLocal({ jvmOptions: set.options });
  const client = localDynamoDbClient(db.endpoint);
  try {
    await ensureKeysOnlyTable(client, TableName);
    const tag = randomBytes(4).toString("hex");
    const phase = async (name: string, total: number, concurrency: number) => {
      const runId = `${name}-${tag}`;
      const latencies: number[] = [];
      const cpuBefore = await cpuMs(db.pid);
      const compilerBefore = await compilerThreadsCpuMs(db.pid);
      const started = performance.now();
      await runConcurrently(total, concurrency, async (i) => {
        const t0 = performance.now();
        await pair(client, runId, i);
        latencies.push(performance.now() - t0);
      });
      const elapsedMs = performance.now() - started;
      const cpu = (await cpuMs(db.pid)) - cpuBefore;
      const compiler = compilerCpuBetween(compilerBefore, await compilerThreadsCpuMs(db.pid));
      return {
        sorted: latencies.sort((a, b) => a - b),
        elapsedMs,
        cpuPer1000: cpu / (total / 1000),
        compilerPer1000: compiler / (total / 1000),
        compilerShare: compiler / cpu,
      };
    };

    const warm = await phase("warm", WARM_UP_PAIRS, WARM_UP_CONCURRENCY);
    if (repeat === 0) return undefined;
    const latency = await phase("p", LATENCY_PAIRS, 1);
    const load = await phase("t", THROUGHPUT_PAIRS, CONCURRENT);
    const sinceStart = compilerCpuBetween(new Map(), await compilerThreadsCpuMs(db.pid));
    const lifetimeShare = sinceStart / (await cpuMs(db.pid));

    let served = WARM_UP_PAIRS + LATENCY_PAIRS + THROUGHPUT_PAIRS;
    for (let chunk = 0; served < SETTLE_MAX_PAIRS; chunk++) {
      const { compilerShare } = await phase(`settle${chunk}`, SETTLE_CHUNK_PAIRS, CONCURRENT);
      served += SETTLE_CHUNK_PAIRS;
      if (compilerShare < SETTLED_SHARE) break;
    }
    const settledLatency = await phase("sp", LATENCY_PAIRS, 1);
    const settledLoad = await phase("st", THROUGHPUT_PAIRS, CONCURRENT);
    const figures: Figures = {
      p50: percentile(latency.sorted, 50),
      p99: percentile(latency.sorted, 99),
      throughput: (THROUGHPUT_PAIRS / load.elapsedMs) * 1000,
      cpuUnderLoad: load.cpuPer1000,
      cpuWarmUp: warm.cpuPer1000,
      compilerUnderLoad: load.compilerPer1000,
      settledAfter: served,
      settledP50: percentile(settledLatency.sorted, 50),
      settledThroughput: (THROUGHPUT_PAIRS / settledLoad.elapsedMs) * 1000,
      settledCpu: settledLoad.cpuPer1000,
    };
    progress(
      `${set.name} #${repeat}: p50 ${figures.p50.toFixed(2)} ms, p99 ${figures.p99.toFixed(2)} ms, ` +
        `${figures.throughput.toFixed(0)} pairs/s with ${CONCURRENT} clients, JVM CPU ` +
        `${figures.cpuUnderLoad.toFixed(0)} ms per 1,000 pairs under load ` +
        `(${figures.cpuWarmUp.toFixed(0)} ms in warm-up, ${(warm.elapsedMs / 1000).toFixed(1)} s); ` +
        `compiler threads: ${(load.compilerShare * 100).toFixed(0)}% of its CPU under load, ` +
        `${(warm.compilerShare * 100).toFixed(0)}% in warm-up, ${(lifetimeShare * 100).toFixed(0)}% since start`,
    );
    progress(
      `${set.name} #${repeat}, compilers done after ${served} pairs` +
        `${served >= SETTLE_MAX_PAIRS ? " (or not: the limit)" : ""}: p50 ${figures.settledP50.toFixed(2)} ms, ` +
        `${figures.settledThroughput.toFixed(0)} pairs/s with ${CONCURRENT} clients, JVM CPU ` +
        `${figures.settledCpu.toFixed(0)} ms per 1,000 pairs ` +
        `(compiler threads ${(settledLoad.compilerShare * 100).toFixed(0)}%)`,
    );
    return figures;
  } finally {
    client.destroy();
    await db.stop();
  }
}

function mean(runs: Figures[], key: keyof Figures): number {
  return runs.reduce((sum, run) => sum + run[key], 0) / runs.length;
}

export async function benchJvm(): Promise<Measurement[]> {
  const runs = new Map<OptionSet, Figures[]>(OPTION_SETS.map((set) => [set, []]));
  // Whatever runs first starts colder (this process's own JIT, the jar and its native library
  // off disk): one unmeasured start takes that.
  progress("priming: one unmeasured start and warm-up with the current options");
  await measureSet(OPTION_SETS[0] as OptionSet, 0);
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    // A B C, then C B A: a machine getting slower or faster over the run favours no set.
    const order = repeat % 2 === 1 ? OPTION_SETS : [...OPTION_SETS].reverse();
    for (const set of order) {
      progress(`${set.name} #${repeat}: ${set.options.join(" ") || "(no options)"}`);
      const figures = await measureSet(set, repeat);
      if (figures) runs.get(set)?.push(figures);
    }
  }

  const [baselineSet] = OPTION_SETS as [OptionSet];
  const baseRuns = runs.get(baselineSet) ?? [];
  const base = (key: keyof Figures, what: string) => ({
    name: `${baselineSet.name}, ${what}`,
    value: mean(baseRuns, key),
  });
  const figuresOf = (label: string, value: (key: keyof Figures) => number) => [
    measurement(
      `${label}, 1 client: p50 of a pair`,
      "ms",
      value("p50"),
      base("p50", "p50"),
      "lower",
    ),
    measurement(
      `${label}, 1 client: p99 of a pair`,
      "ms",
      value("p99"),
      base("p99", "p99"),
      "lower",
    ),
    measurement(
      `${label}, ${CONCURRENT} clients: pairs/s`,
      "pairs/s",
      value("throughput"),
      base("throughput", `${CONCURRENT} clients`),
      "higher",
    ),
    measurement(
      `${label}, JVM CPU per 1,000 pairs, ${CONCURRENT} clients`,
      "ms",
      value("cpuUnderLoad"),
      base("cpuUnderLoad", "under load"),
      "lower",
    ),
    measurement(
      `${label}, compilers done: 1 client: p50 of a pair`,
      "ms",
      value("settledP50"),
      base("settledP50", "compilers done, p50"),
      "lower",
    ),
    measurement(
      `${label}, compilers done: ${CONCURRENT} clients: pairs/s`,
      "pairs/s",
      value("settledThroughput"),
      base("settledThroughput", `compilers done, ${CONCURRENT} clients`),
      "higher",
    ),
    measurement(
      `${label}, compilers done: JVM CPU per 1,000 pairs, ${CONCURRENT} clients`,
      "ms",
      value("settledCpu"),
      base("settledCpu", "compilers done, under load"),
      "lower",
    ),
    measurement(
      `${label}, pairs served before the compilers were done`,
      "pairs",
      value("settledAfter"),
      base("settledAfter", "pairs"),
      "lower",
    ),
    measurement(
      `${label}, JVM CPU per 1,000 pairs, warm-up`,
      "ms",
      value("cpuWarmUp"),
      base("cpuWarmUp", "warm-up"),
      "lower",
    ),
  ];

  const measurements: Measurement[] = [];
  for (const set of OPTION_SETS.slice(1)) {
    const setRuns = runs.get(set) ?? [];
    measurements.push(...figuresOf(`DynamoDB Local, ${set.name}`, (key) => mean(setRuns, key)));
  }
  // What the compilers take: their threads' CPU against the whole JVM's, each set on its own.
  for (const set of OPTION_SETS) {
    const setRuns = runs.get(set) ?? [];
    measurements.push(
      measurement(
        `DynamoDB Local, ${set.name}: JIT compiler threads' CPU per 1,000 pairs, ${CONCURRENT} clients`,
        "ms",
        mean(setRuns, "compilerUnderLoad"),
        { name: "the whole JVM's, same options", value: mean(setRuns, "cpuUnderLoad") },
        "lower",
      ),
    );
  }
  // The noise floor of this run: the same options started twice.
  const [first, second] = baseRuns;
  if (first && second) {
    const noise = (key: keyof Figures, what: string) => ({
      name: `${baselineSet.name}, first start, ${what}`,
      value: first[key],
    });
    measurements.push(
      measurement(
        `DynamoDB Local, ${baselineSet.name}, second start, 1 client: p50 of a pair`,
        "ms",
        second.p50,
        noise("p50", "p50"),
        "lower",
      ),
      measurement(
        `DynamoDB Local, ${baselineSet.name}, second start, ${CONCURRENT} clients: pairs/s`,
        "pairs/s",
        second.throughput,
        noise("throughput", `${CONCURRENT} clients`),
        "higher",
      ),
    );
  }
  return measurements;
}
