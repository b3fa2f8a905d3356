/**
 * fastpath: one readability_analyzer call through Toolbus as users run it (`npm start`, a
 * member key), side by side with the same tool behind a bare official MCP SDK server (the
 * main baseline), a bare Hono route, and the floor of a persisted call (a bare route doing one
 * conditional PutItem and one UpdateItem on the same DynamoDB Local), all on this machine in
 * one run. MCP is measured three times: with plain JSON-RPC POSTs, and through both
 * generations of the official SDK client as agents call it (v1 on 2025-11-25, v2 on
 * 2026-07-28). Also:
 * lost / duplicated events under load, rss_feed cache hit vs miss, the DynamoDB Local floor,
 * and the on-disk store against the in-memory one.
 */
import { randomBytes } from "node:crypto";
import { slowFeedServer } from "./calls";
import { type BareServer, startBareServer } from "./fast-path/bare-servers";
import { leftovers } from "./fast-path/children";
import {
  bareHonoTarget,
  bareMcpTarget,
  CONCURRENT,
  type Figures,
  floorTarget,
  latencyFigures,
  measureSideBySide,
  type Phase,
  runPhase,
  type Target,
  toolbusMcpTarget,
  toolbusRestTarget,
} from "./fast-path/clients";
import { type Accounting, accountForCalls } from "./fast-path/events";
import { mcpSdkTarget, mcpSdkV2Target } from "./fast-path/mcp-sdk";
import { measureStorageFloor } from "./fast-path/storage";
import { createMemberKey, type RunningToolbus, startToolbus } from "./fast-path/toolbus";
import { type Measurement, measurement } from "./stats";

function progress(message: string): void {
  console.error(`[fastpath] ${message}`);
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** Run ids are unique per phase, so every phase's events can be read back on their own. */
function runIds(label: string): (phase: string) => string {
  const tag = randomBytes(4).toString("hex");
  return (phase) => `fastpath-${label}-${phase}-${tag}`;
}

/** Cleanups run last-in first-out; one failing does not stop the others. */
class Cleanups {
  readonly #steps: { name: string; run: () => Promise<void> }[] = [];

  add(name: string, run: () => Promise<void>): void {
    this.#steps.push({ name, run });
  }

  /** Runs (and forgets) one cleanup now, for something stopped before the end. */
  async run(name: string): Promise<void> {
    const index = this.#steps.findIndex((step) => step.name === name);
    if (index < 0) throw new Error(`no cleanup named ${name}`);
    const [step] = this.#steps.splice(index, 1);
    await step?.run();
  }

  async runAll(): Promise<void> {
    for (let step = this.#steps.pop(); step; step = this.#steps.pop()) {
      try {
        await step.run();
      } catch (error) {
        progress(`cleanup "${step.name}" failed: ${String(error)}`);
      }
    }
  }
}

/** p50, p99 and throughput of `figures` against the same three of `base`. */
function compared(label: string, figures: Figures, base: Figures & { name: string }) {
  const to = (value: number, what: string) => ({ name: `${base.name}, ${what}`, value });
  return [
    measurement(`${label}, 1 client: p50`, "ms", figures.p50, to(base.p50, "p50"), "lower"),
    measurement(`${label}, 1 client: p99`, "ms", figures.p99, to(base.p99, "p99"), "lower"),
    measurement(
      `${label}, ${CONCURRENT} clients: calls/s`,
      "calls/s",
      figures.throughput,
      to(base.throughput, `${CONCURRENT} clients`),
      "higher",
    ),
  ];
}

/** Lost and duplicated as counts against a baseline of none. */
function accountingMeasurements(label: string, calls: number, accounting: Accounting) {
  const none = { name: "none", value: 0 };
  return [
    measurement(`${label}: lost of ${calls} calls`, "calls", accounting.lost, none, "lower"),
    measurement(
      `${label}: duplicated of ${calls} calls`,
      "calls",
      accounting.duplicated,
      none,
      "lower",
    ),
  ];
}

async function checkEvents(
  toolbus: RunningToolbus,
  key: string,
  runId: string,
  callIds: string[],
): Promise<Accounting> {
  progress(`reading back the events of ${callIds.length} calls (run ${runId})`);
  const accounting = await accountForCalls(toolbus.api, key, runId, callIds);
  progress(
    `EVENTS: ${accounting.lost} lost, ${accounting.duplicated} duplicated, ` +
      `${accounting.unexpected} unexpected, ${accounting.events} events read ` +
      `(after ${(accounting.waitedMs / 1000).toFixed(1)} s)`,
  );
  return accounting;
}

/**
 * rss_feed through the REST sync path against a 50 ms upstream: misses (a new URL each) and
 * hits (one URL). Its own member key, and 44 calls in all: under rss_feed's 60 a minute.
 */
async function cacheHitVsMiss(toolbus: RunningToolbus): Promise<Measurement[]> {
  progress("rss_feed cache: 20 misses and 20 hits against a 50 ms upstream");
  const key = await createMemberKey(toolbus, "fastpath-feed");
  const upstream = await slowFeedServer();
  try {
    const feed = (url: (i: number) => string) =>
      toolbusRestTarget(toolbus.api, key, "rss_feed", (i) => ({ action: "fetch", url: url(i) }));
    const ids = runIds("feed");
    const calls = (target: Target, total: number, phase: string) =>
      runPhase(target, { total, concurrency: 1, runId: ids(phase) });
    await calls(
      feed((i) => `${upstream.url}/warm-${i}.xml`),
      3,
      "warm",
    );
    const misses = await calls(
      feed((i) => `${upstream.url}/miss-${i}.xml`),
      20,
      "miss",
    );
    const miss = latencyFigures(misses.latencies);
    const hitFeed = feed(() => `${upstream.url}/hit.xml`);
    await calls(hitFeed, 1, "prime");
    const hit = latencyFigures((await calls(hitFeed, 20, "hit")).latencies);
    const speedup = miss.p50 / hit.p50;
    progress(
      `CACHE: hit p50 ${ms(hit.p50)}, miss p50 ${ms(miss.p50)}: ${speedup.toFixed(1)}x faster ` +
        `(target >= 5x: ${speedup >= 5 ? "met" : "NOT met"})`,
    );
    return [
      measurement(
        "Toolbus REST rss_feed, cache hit, 1 client: p50",
        "ms",
        hit.p50,
        { name: "the same call, cache miss (upstream answers in 50 ms), p50", value: miss.p50 },
        "lower",
      ),
    ];
  } finally {
    upstream.close();
  }
}

async function stopToolbus(toolbus: RunningToolbus, label: string): Promise<void> {
  progress(`stopping Toolbus (${label})`);
  const left = await toolbus.stop();
  if (left.length === 0) {
    progress(`Toolbus (${label}) stopped: nothing left running`);
    return;
  }
  progress(
    `Toolbus (${label}) LEFT PROCESSES BEHIND (now killed):\n${left.map((p) => `  ${p.pid} ${p.args}`).join("\n")}`,
  );
}

/** The floor route on `toolbus`'s own DynamoDB Local, started for the run and stopped at the end. */
async function startFloor(cleanups: Cleanups, toolbus: RunningToolbus, label: string) {
  const name = `floor route (${label})`;
  const server = await started(
    cleanups,
    name,
    startBareServer(name, "floor.ts", { FLOOR_DYNAMODB_ENDPOINT: toolbus.dynamodb }),
    stopBareServer,
  );
  return { target: floorTarget(server.origin), stop: () => cleanups.run(name) };
}

/**
 * Toolbus's MCP endpoint through an official SDK client, with the member key: the first
 * generation (`@modelcontextprotocol/sdk`, 2025-11-25) or the second
 * (`@modelcontextprotocol/client`, 2026-07-28). Connected (and its tools listed) once.
 */
function mcpSdk(toolbus: RunningToolbus, key: string, generation: 1 | 2) {
  const make = generation === 1 ? mcpSdkTarget : mcpSdkV2Target;
  return make(`Toolbus MCP (official SDK v${generation} client)`, `${toolbus.api}/mcp`, {
    authorization: `Bearer ${key}`,
  });
}

/**
 * `targets` measured side by side (measureSideBySide), with progress; each one's figures named
 * by `names`, with its throughput phases' run ids and calls for reading the events back.
 */
async function measureTogether(label: string, targets: Record<string, Target>) {
  const names = Object.keys(targets);
  const list = Object.values(targets);
  progress(`${names.join(", ")}: side by side, warm-up, then turns of 1 and ${CONCURRENT} clients`);
  const ids = runIds(label);
  const figures = await measureSideBySide(list, (t, phase) => ids(`${t}-${phase}`));
  const out: Record<string, Figures & { throughputPhases: Phase[] }> = {};
  figures.forEach((figure, t) => {
    const name = names[t] as string;
    out[name] = figure;
    progress(
      `${name}: p50 ${ms(figure.p50)}, p99 ${ms(figure.p99)}, ${figure.throughput.toFixed(0)} calls/s with ${CONCURRENT} clients`,
    );
  });
  return out;
}

/** The events of every throughput phase's calls, read back and added up. */
async function checkPhases(
  toolbus: RunningToolbus,
  key: string,
  phases: readonly Phase[],
): Promise<Accounting> {
  const total: Accounting = { lost: 0, duplicated: 0, unexpected: 0, events: 0, waitedMs: 0 };
  for (const phase of phases) {
    const one = await checkEvents(toolbus, key, phase.runId, phase.callIds);
    total.lost += one.lost;
    total.duplicated += one.duplicated;
    total.unexpected += one.unexpected;
    total.events += one.events;
    total.waitedMs = Math.max(total.waitedMs, one.waitedMs);
  }
  return total;
}

async function stopBareServer(server: BareServer): Promise<void> {
  await server.child.stop();
  const left = await leftovers([server.child.pid], [], 2_000);
  if (left.length > 0) progress(`${server.child.name} left ${left.length} process(es) behind`);
}

/** Starts something, and registers its stop with `cleanups` at once. */
async function started<T>(
  cleanups: Cleanups,
  name: string,
  start: Promise<T>,
  stop: (value: T) => Promise<void>,
): Promise<T> {
  const value = await start;
  cleanups.add(name, () => stop(value));
  return value;
}

/** Promise.all that waits for every start to settle before throwing the first failure. */
async function allStarted<T extends readonly unknown[]>(
  starts: { [K in keyof T]: Promise<T[K]> },
): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export async function benchFastPath(): Promise<Measurement[]> {
  const cleanups = new Cleanups();
  try {
    progress("starting the bare MCP SDK server, the bare Hono route and npm start --memory");
    // Started together (they are independent); each is registered for cleanup as it comes
    // up, and all are waited for before any failure is thrown, so none starts after cleanup.
    const [bareMcp, bareHono, memory] = await allStarted([
      started(
        cleanups,
        "bare MCP",
        startBareServer("bare MCP SDK server", "bare-mcp.ts"),
        stopBareServer,
      ),
      started(
        cleanups,
        "bare Hono",
        startBareServer("bare Hono route", "bare-hono.ts"),
        stopBareServer,
      ),
      started(cleanups, "Toolbus in memory", startToolbus({ memory: true }), (toolbus) =>
        stopToolbus(toolbus, "in memory"),
      ),
    ] as const);
    progress(`Toolbus (in memory) is up at ${memory.api}`);
    const member = await createMemberKey(memory, "fastpath");

    // Everything that shares this machine's state is measured side by side, in turns.
    const floorInMemoryRoute = await startFloor(cleanups, memory, "in memory");
    const sdkV1 = await mcpSdk(memory, member, 1);
    const sdkV2 = await mcpSdk(memory, member, 2);
    cleanups.add("official MCP clients", async () => {
      await Promise.all([sdkV1.close(), sdkV2.close()]);
    });
    const inMemoryFigures = await measureTogether("memory", {
      "bare MCP SDK server": bareMcpTarget(bareMcp.origin),
      "bare Hono route": bareHonoTarget(bareHono.origin),
      "Toolbus REST": toolbusRestTarget(memory.api, member),
      "Toolbus MCP": toolbusMcpTarget(memory.api, member),
      "Toolbus MCP, official SDK v1 client": sdkV1,
      "Toolbus MCP, official SDK v2 client": sdkV2,
      "floor route, in memory": floorInMemoryRoute.target,
    });
    const figuresOf = (name: string) => {
      const figures = inMemoryFigures[name];
      if (!figures) throw new Error(`no figures for ${name}`);
      return figures;
    };
    const mcp = { ...figuresOf("bare MCP SDK server"), name: "bare MCP SDK server" };
    const hono = figuresOf("bare Hono route");
    const rest = figuresOf("Toolbus REST");
    const toolbusMcp = figuresOf("Toolbus MCP");
    const toolbusMcpSdk = figuresOf("Toolbus MCP, official SDK v1 client");
    const toolbusMcpSdkV2 = figuresOf("Toolbus MCP, official SDK v2 client");
    const floorInMemory = {
      ...figuresOf("floor route, in memory"),
      name: "floor route, in memory",
    };
    await floorInMemoryRoute.stop();
    await cleanups.run("official MCP clients");
    const restCalls = await checkPhases(memory, member, rest.throughputPhases);
    const cache = await cacheHitVsMiss(memory);
    // Stopped before the storage floor and the on-disk run: one JVM at a time on 2 cores.
    await cleanups.run("Toolbus in memory");

    progress("storage floor: DynamoDB Local in memory in this process");
    const floor = await measureStorageFloor();
    progress(
      `STORAGE: GetItem p50 ${ms(floor.getP50)} (p99 ${ms(floor.getP99)}), PutItem ${floor.putThroughput.toFixed(0)}/s with ${CONCURRENT} clients`,
    );

    progress("starting npm start on disk (no --memory)");
    const disk = await started(cleanups, "Toolbus on disk", startToolbus({ memory: false }), (t) =>
      stopToolbus(t, "on disk"),
    );
    const diskMember = await createMemberKey(disk, "fastpath");
    const floorOnDiskRoute = await startFloor(cleanups, disk, "on disk");
    const onDiskFigures = await measureTogether("disk", {
      "Toolbus REST, on disk": toolbusRestTarget(disk.api, diskMember),
      "floor route, on disk": floorOnDiskRoute.target,
    });
    const onDisk = onDiskFigures["Toolbus REST, on disk"];
    const floorOnDiskFigures = onDiskFigures["floor route, on disk"];
    if (!onDisk || !floorOnDiskFigures) throw new Error("no on-disk figures");
    const floorOnDisk = { ...floorOnDiskFigures, name: "floor route, on disk" };
    await floorOnDiskRoute.stop();
    const diskCalls = await checkPhases(disk, diskMember, onDisk.throughputPhases);

    const callsOf = (phases: readonly Phase[]) =>
      phases.reduce((sum, phase) => sum + phase.callIds.length, 0);
    const calls = callsOf(rest.throughputPhases);
    const inMemory = { ...rest, name: "Toolbus REST sync call, in-memory store" };
    return [
      ...compared("bare Hono route POST /call", hono, mcp),
      ...compared("Toolbus REST sync call (member key, in-memory store)", rest, mcp),
      ...compared("Toolbus MCP tools/call (member key, in-memory store)", toolbusMcp, mcp),
      ...compared("floor route (a persisted call, in memory)", floorInMemory, mcp),
      ...compared("Toolbus REST sync call against the floor (in memory)", rest, floorInMemory),
      ...compared(
        "Toolbus MCP tools/call, official SDK client, against REST (in memory)",
        toolbusMcpSdk,
        { ...rest, name: "Toolbus REST sync call" },
      ),
      ...compared(
        "Toolbus MCP tools/call, official SDK v2 client (2026-07-28), against REST (in memory)",
        toolbusMcpSdkV2,
        { ...rest, name: "Toolbus REST sync call" },
      ),
      ...accountingMeasurements(
        `Toolbus REST, ${CONCURRENT} clients, one run a turn, in memory`,
        calls,
        restCalls,
      ),
      ...cache,
      measurement(
        "DynamoDB Local GetItem alone (in memory, warmed), 1 client: p50",
        "ms",
        floor.getP50,
        { name: "bare MCP SDK server, p50", value: mcp.p50 },
        "lower",
      ),
      measurement(
        `DynamoDB Local PutItem alone (in memory), ${CONCURRENT} clients: calls/s`,
        "calls/s",
        floor.putThroughput,
        {
          name: `Toolbus REST sync calls/s, ${CONCURRENT} clients, in memory`,
          value: rest.throughput,
        },
        "higher",
      ),
      ...compared("Toolbus REST sync call (member key, on-disk store)", onDisk, inMemory),
      ...compared("Toolbus REST sync call against the floor (on disk)", onDisk, floorOnDisk),
      ...accountingMeasurements(
        `Toolbus REST, ${CONCURRENT} clients, one run a turn, on disk`,
        callsOf(onDisk.throughputPhases),
        diskCalls,
      ),
    ];
  } finally {
    await cleanups.runAll();
  }
}
