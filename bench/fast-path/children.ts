import { execFile, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

/** The repository root: children run from it so workspace packages and tsx resolve. */
export const REPO_ROOT = new URL("../..", import.meta.url).pathname;

const OUTPUT_TAIL_CHARS = 16_384;
const STOP_GRACE_MS = 10_000;

/**
 * Groups not stopped yet. Detached children do not get the terminal's Ctrl-C, so if this
 * process is interrupted or exits early they are told to stop here; Toolbus's own SIGTERM
 * handling then takes its DynamoDB Local JVM down with it.
 */
const live = new Set<number>();

function terminateLive(): void {
  for (const pgid of live) signalGroup(pgid, "SIGTERM");
}

function onInterrupt(signal: NodeJS.Signals): void {
  terminateLive();
  process.exit(signal === "SIGINT" ? 130 : 143);
}

function track(pgid: number): void {
  if (live.size === 0) {
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onInterrupt);
    process.on("exit", terminateLive);
  }
  live.add(pgid);
}

function untrack(pgid: number): void {
  live.delete(pgid);
  if (live.size === 0) {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
    process.off("exit", terminateLive);
  }
}

export interface ChildGroup {
  name: string;
  /** The leader's pid, which is also its process group id (spawned detached). */
  pid: number;
  /** The last lines the group wrote to stdout and stderr, for error messages. */
  outputTail(): string;
  /** Resolves with the first stdout line matching `pattern`; rejects on exit or timeout. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  hasExited(): boolean;
  /** SIGTERM to the whole group, then SIGKILL after a grace period. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts a command as the leader of its own process group, so that stopping it reaches
 * everything it started (npm -> tsx -> node), not only the process we spawned.
 */
export function spawnGroup(
  name: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ChildGroup {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`${name}: could not spawn ${command}`);
  const pid = child.pid;
  track(pid);

  let tail = "";
  let stdoutLines = "";
  const lineWaiters = new Set<(line: string) => void>();
  const remember = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stderr.on("data", remember);
  // Always drained, so a chatty child never blocks on a full pipe.
  child.stdout.on("data", (chunk: Buffer) => {
    remember(chunk);
    stdoutLines += chunk.toString("utf8");
    const lines = stdoutLines.split("\n");
    stdoutLines = lines.pop() ?? "";
    for (const line of lines) for (const waiter of lineWaiters) waiter(line.trim());
  });

  let exited = false;
  const exitListeners = new Set<() => void>();
  child.once("exit", () => {
    exited = true;
    for (const listener of exitListeners) listener();
  });

  let stopping: Promise<void> | undefined;
  return {
    name,
    pid,
    outputTail: () => tail,
    hasExited: () => exited,
    waitForLine(pattern, timeoutMs) {
      return new Promise<string>((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          lineWaiters.delete(onLine);
          exitListeners.delete(onExit);
        };
        const onLine = (line: string) => {
          if (!pattern.test(line)) return;
          done();
          resolve(line);
        };
        const onExit = () => {
          done();
          reject(new Error(`${name} exited before it was ready:\n${tail}`));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${name} was not ready after ${timeoutMs} ms:\n${tail}`));
        }, timeoutMs);
        lineWaiters.add(onLine);
        exitListeners.add(onExit);
        if (exited) onExit();
      });
    },
    stop() {
      stopping ??= stopGroup(name, pid);
      return stopping;
    },
  };
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopGroup(name: string, pgid: number): Promise<void> {
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + STOP_GRACE_MS;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(pgid)) {
    console.error(`[fastpath] ${name} ignored SIGTERM for ${STOP_GRACE_MS} ms: SIGKILL`);
    signalGroup(pgid, "SIGKILL");
    while (groupAlive(pgid)) await sleep(50);
  }
  untrack(pgid);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** A process still running after its group was stopped. */
export interface Leftover {
  pid: number;
  pgid: number;
  args: string;
}

/**
 * Processes left behind by stopped children: any member of their process groups, and any
 * process whose command line contains one of `markers` (such as the JVM's `-port <n>`: the
 * DynamoDB Local supervisor puts the JVM in a group of its own, so group ids miss it).
 * Polls for up to `waitMs`, since the JVM's watchdog gives it a few seconds to exit.
 */
export async function leftovers(
  pgids: readonly number[],
  markers: readonly string[],
  waitMs = 12_000,
): Promise<Leftover[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = (await processTable()).filter(
      (p) =>
        p.pid !== process.pid &&
        (pgids.includes(p.pgid) || markers.some((marker) => p.args.includes(marker))),
    );
    if (found.length === 0 || Date.now() >= deadline) return found;
    await sleep(250);
  }
}

async function processTable(): Promise<Leftover[]> {
  const { stdout } = await promisify(execFile)("ps", ["-eo", "pid=,pgid=,args="]);
  return stdout
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), pgid: Number(m[2]), args: m[3] ?? "" }));
}
