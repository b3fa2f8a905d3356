import { type ChildProcess, spawn } from "node:child_process";
import { DynamoDbLocalStartError } from "./errors";

/**
 * Seconds the watchdog gives the program between SIGTERM and SIGKILL. DynamoDB Local
 * normally exits well within this on SIGTERM.
 */
const WATCHDOG_GRACE_SECONDS = 5;

/**
 * The watchdog. A Node process killed with SIGKILL runs no handlers, so the only thing that
 * reliably notices its death is the kernel closing its end of a pipe. This shell holds the
 * read end of such a pipe as stdin: when it reaches EOF (the parent called stop(), exited,
 * crashed or was SIGKILLed) the program is terminated. When the program exits on its own,
 * the shell takes its whole process group (itself excluded) down with it and exits too.
 *
 * Details that matter:
 * - A background job of a non-interactive shell gets /dev/null as stdin, so the pipe is kept
 *   as fd 3 for the watcher and closed in the program (which gets /dev/null).
 * - The program's stdout goes to stderr so that stdout carries only its pid.
 * - The watcher starts before the pid is printed: if the parent is already gone, `echo` dies
 *   of SIGPIPE, and the watcher must already be there to see the EOF.
 * - The shell is spawned detached, so it leads its own session and process group: a
 *   terminal's Ctrl-C does not reach it directly, and `kill -- -$$` reaches only the watcher
 *   (and its sleep), never the parent's group. The final `wait` reaps the watcher.
 */
const SUPERVISOR_SCRIPT = `
exec 3<&0 0</dev/null
"$@" 3<&- 1>&2 &
program=$!
(
  while read -r _ <&3; do :; done
  kill -s TERM "$program" 2>/dev/null
  sleep ${WATCHDOG_GRACE_SECONDS}
  kill -s KILL "$program" 2>/dev/null
) &
exec 3<&-
echo "$program"
wait "$program"
status=$?
trap '' TERM
kill -s TERM -- "-$$" 2>/dev/null
wait
exit "$status"
`;

/** Keeps the last few kilobytes of the program's output for error messages. */
const OUTPUT_TAIL_CHARS = 8_192;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SupervisedProcess {
  /** The supervised program's pid (not the shell's). */
  readonly pid: number;
  /** The supervisor shell's pid, which is also the id of the process group it leads. */
  readonly groupId: number;
  /** Settles once the supervisor has exited, which it only does after the program has. */
  readonly exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The last lines the program wrote to stdout or stderr. */
  outputTail(): string;
  /**
   * Closes the watchdog pipe, waits up to `graceMs` for the program to go, then SIGKILLs the
   * whole process group. Idempotent.
   */
  stop(graceMs?: number): Promise<void>;
}

/** Programs still running, terminated from a process 'exit' hook as belt and braces. */
const running = new Set<number>();
let exitHookInstalled = false;

function terminateRunningOnExit(): void {
  // Only the program, not the group: the supervisor stays alive to reap it and to escalate
  // to SIGKILL if it ignores SIGTERM.
  for (const pid of running) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
}

/**
 * Starts `command args...` under the watchdog shell and resolves once its pid is known.
 * The child does not keep the event loop alive: a parent that simply runs out of work exits,
 * and the watchdog then ends the program.
 */
export async function startSupervised(
  command: string,
  args: readonly string[],
): Promise<SupervisedProcess> {
  const child = spawn(
    "/bin/sh",
    ["-c", SUPERVISOR_SCRIPT, "toolbus-supervisor", command, ...args],
    {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );

  let tail = "";
  const remember = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stderr?.on("data", remember);
  // A pipe whose other end is gone must not crash the parent with an unhandled 'error'.
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.on("error", () => {});

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    let drainTimer: NodeJS.Timeout | undefined;
    const settle = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(drainTimer);
      if (exitInfo !== undefined) return;
      exitInfo = { code, signal };
      resolve(exitInfo);
    };
    // 'exit' can come before the last output has been read, and that output (a bind error,
    // a stack trace) is what error messages need. 'close' waits for the pipes to drain; the
    // timer covers a pipe some stray process might still hold open.
    child.once("close", settle);
    child.once("exit", (code, signal) => {
      child.stdin?.destroy();
      drainTimer = setTimeout(() => settle(code, signal), 1_000);
    });
  });

  let pid: number;
  try {
    pid = await readProgramPid(child, exited, () => tail);
  } catch (error) {
    if (child.pid !== undefined) killGroup(child.pid);
    throw error;
  }
  const groupId = child.pid as number;
  running.add(pid);
  void exited.then(() => running.delete(pid));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", terminateRunningOnExit);
  }
  unrefChild(child);

  let stopping: Promise<void> | undefined;
  return {
    pid,
    groupId,
    exited,
    hasExited: () => exitInfo !== undefined,
    outputTail: () => tail,
    stop(graceMs = (WATCHDOG_GRACE_SECONDS + 3) * 1000) {
      stopping ??= stopSupervised(child, { pid, groupId, exited, graceMs });
      return stopping;
    },
  };
}

async function stopSupervised(
  child: ChildProcess,
  target: { pid: number; groupId: number; exited: Promise<ExitInfo>; graceMs: number },
): Promise<void> {
  // Keep the event loop alive while we wait, or `await db.stop()` at the end of a script
  // could let Node exit half-way.
  child.ref();
  child.stdin?.end();
  child.stdin?.destroy();
  const inTime = await settlesWithin(target.exited, target.graceMs);
  if (!inTime) {
    killGroup(target.groupId);
    await target.exited;
  }
  // After a group SIGKILL the JVM may outlive the shell by a moment until init reaps it.
  await waitUntilGone(target.pid, 5_000);
  running.delete(target.pid);
  child.unref();
}

function readProgramPid(
  child: ChildProcess,
  exited: Promise<ExitInfo>,
  tail: () => string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
      const newline = stdout.indexOf("\n");
      if (newline === -1) return;
      child.stdout?.off("data", onData);
      child.stdout?.resume(); // nothing else is expected; keep the pipe drained anyway
      const pid = Number(stdout.slice(0, newline).trim());
      if (Number.isInteger(pid) && pid > 0) resolve(pid);
      else reject(new DynamoDbLocalStartError(`The supervisor printed no pid: ${stdout}`));
    };
    child.stdout?.on("data", onData);
    child.once("error", (cause) =>
      reject(
        new DynamoDbLocalStartError("Could not spawn /bin/sh to supervise the JVM", { cause }),
      ),
    );
    void exited.then(({ code, signal }) =>
      reject(
        new DynamoDbLocalStartError(
          `The supervisor exited (code ${code}, signal ${signal}) before starting the program.\n${tail()}`,
          { context: { code, signal } },
        ),
      ),
    );
  });
}

function unrefChild(child: ChildProcess): void {
  child.unref();
  // The stdio pipes are sockets with their own handles; ChildProcess types them as plain
  // streams, which do not expose unref().
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}

function killGroup(groupId: number): void {
  try {
    process.kill(-groupId, "SIGKILL");
  } catch {
    // The group is already empty.
  }
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** True once `pid` no longer exists. Polls, because we are not its parent and get no event. */
export function isProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!isProcessGone(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}
