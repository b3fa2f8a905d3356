import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A server in its own Node process on loopback. */
export interface ServerProcess {
  /** Its Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  url: string;
  pid: number;
  /** The last lines it printed, for a failure message. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Runs `node <args>` from the repository's root and resolves once the process prints its
 * address as a `{"url": ...}` line on stdout; `name` says which server a failure is about.
 */
export async function startServerProcess(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    // Bounded: a server may log every request, and only the end explains a failure.
    if (tail.length > 200) tail.shift();
  };
  // Both streams are always read, so a chatty server never blocks on a full pipe.
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", remember);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not listen within 60 s:\n${tail.join("\n")}`));
    }, 60_000);
    lines.on("line", (line) => {
      remember(line);
      if (!line.startsWith('{"url":')) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening:\n${tail.join("\n")}`));
    });
  });

  return {
    url,
    pid: child.pid as number,
    output: () => tail.join("\n"),
    close: () => stop(child, exited),
  };
}

/** SIGTERM, then SIGKILL if it is still there after a few seconds. */
async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
