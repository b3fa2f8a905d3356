import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Whether `pid` is a live process. A zombie counts as gone: it runs nothing and only waits
 * for its (possibly new) parent to reap it, which is not ours to control.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    // Linux: the state follows the parenthesised command name in /proc/<pid>/stat.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** Bounded polling: true as soon as `pid` is gone, false if it is still there at the end. */
export async function waitUntilGone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** The process group of a live process, read with ps so it works on Linux and macOS. */
export function processGroupOf(pid: number): number {
  return Number(
    execFileSync("ps", ["-o", "pgid=", "-p", String(pid)], { encoding: "utf8" }).trim(),
  );
}

/** Live (non-zombie) members of a process group. */
export function runningInGroup(groupId: number): number[] {
  const table = execFileSync("ps", ["-A", "-o", "pid=,pgid=,stat="], { encoding: "utf8" });
  return table
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, pgid, stat]) => Number(pgid) === groupId && !stat?.startsWith("Z"))
    .map(([pid]) => Number(pid));
}
