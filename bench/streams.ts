import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { TEXT } from "./fast-path/clients";
import { type RunningToolbus, startToolbus } from "./fast-path/toolbus";
import { type Measurement, measurement, percentile } from "./stats";

/**
 * What idle event streams cost under `npm start` (on disk, as users run it): CPU of the Node
 * process and of the DynamoDB Local JVM, and a sequential call's latency, with 200 streams
 * open on one run and nothing happening in it, against the same with no stream open.
 */
const STREAMS = 200;
const STREAMS_PER_KEY = 20;
const WINDOW_MS = 10_000;
const CALLS = 300;

export async function benchStreams(): Promise<Measurement[]> {
  const toolbus = await startToolbus({ memory: false });
  try {
    const pids = await processes(toolbus);
    const keys = await Promise.all(
      Array.from({ length: STREAMS / STREAMS_PER_KEY }, (_, i) => viewerKey(toolbus, `idle-${i}`)),
    );
    await callLatencies(toolbus, "warm-up");
    const quiet = await cpuOver(pids, WINDOW_MS);
    const quietCalls = await callLatencies(toolbus, "quiet");

    const streams = new AbortController();
    const open = await Promise.all(
      Array.from({ length: STREAMS }, (_, i) =>
        fetch(`${toolbus.api}/v1/runs/idle-run/events`, {
          headers: {
            authorization: `Bearer ${keys[i % keys.length]}`,
            accept: "text/event-stream",
          },
          signal: streams.signal,
        }),
      ),
    );
    if (open.some((response) => response.status !== 200)) {
      throw new Error(`streams answered ${open.map((response) => response.status).join(",")}`);
    }
    // Keep reading, as clients do, so nothing backs up.
    for (const response of open) void response.body?.pipeTo(new WritableStream()).catch(() => {});
    await sleep(2_000);
    const busy = await cpuOver(pids, WINDOW_MS);
    const busyCalls = await callLatencies(toolbus, "streams");
    streams.abort();

    const name = `${STREAMS} idle event streams on one run, npm start on disk`;
    const rows: [string, string, number, number][] = [
      ["Node CPU", "% of a core", busy.node, quiet.node],
      ["DynamoDB Local JVM CPU", "% of a core", busy.jvm, quiet.jvm],
      ["sequential call p50", "ms", busyCalls.p50, quietCalls.p50],
      ["sequential call p90", "ms", busyCalls.p90, quietCalls.p90],
    ];
    return rows.map(([what, unit, value, without]) =>
      measurement(`${name}: ${what}`, unit, value, { name: "no streams", value: without }, "lower"),
    );
  } finally {
    await toolbus.stop();
  }
}

async function viewerKey(toolbus: RunningToolbus, name: string): Promise<string> {
  const response = await fetch(`${toolbus.api}/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${toolbus.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name, role: "viewer" }),
  });
  const body = (await response.json()) as { key?: string };
  if (response.status !== 201 || !body.key) throw new Error(`POST /v1/keys: ${response.status}`);
  return body.key;
}

async function callLatencies(toolbus: RunningToolbus, runId: string) {
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    const response = await fetch(`${toolbus.api}/v1/runs/${runId}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${toolbus.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "readability_analyzer", input: { text: TEXT }, wait: 10 }),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`a call answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p90: percentile(times, 90) };
}

interface Pids {
  node: number;
  jvm: number;
}

/** The `npm start` process (local.json's writer) and its DynamoDB Local JVM (by its port). */
async function processes(toolbus: RunningToolbus): Promise<Pids> {
  const state = JSON.parse(await readFile(join(toolbus.stateDir, "local.json"), "utf8")) as {
    pid: number;
    dynamodb: string;
  };
  const port = new URL(state.dynamodb).port;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const name = await readFile(`/proc/${entry}/comm`, "utf8").catch(() => "");
    if (name.trim() !== "java") continue;
    const args = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0");
    if (args[args.indexOf("-port") + 1] === port) return { node: state.pid, jvm: Number(entry) };
  }
  throw new Error(`No DynamoDB Local JVM on port ${port}.`);
}

/** CPU time (user + system) of a process so far, in ms, from /proc (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // The command name may hold spaces; fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function cpuOver(pids: Pids, ms: number): Promise<{ node: number; jvm: number }> {
  const before = { node: await cpuMs(pids.node), jvm: await cpuMs(pids.jvm) };
  await sleep(ms);
  return {
    node: ((await cpuMs(pids.node)) - before.node) / (ms / 100),
    jvm: ((await cpuMs(pids.jvm)) - before.jvm) / (ms / 100),
  };
}
