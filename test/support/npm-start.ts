import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "../..");
const START = join(ROOT, "packages/local/src/cli/start.ts");

export interface StartedToolbus {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/** What `npm start` writes to `<state dir>/local.json`. */
export interface LocalEndpoints {
  dynamodb: string;
  eventbridge: string;
  api: string;
  busName: string;
  pid: number;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export async function readEndpoints(stateDir: string): Promise<LocalEndpoints> {
  return JSON.parse(await readFile(join(stateDir, "local.json"), "utf8")) as LocalEndpoints;
}

/**
 * `npm start`'s entry point in a child process, resolved once it says it is running. Generous
 * with time: on a loaded 2-core machine a cold start (JVM, tsx, every handler) can take long.
 */
export async function spawnToolbus(
  args: readonly string[],
  options: { via?: "node" | "npm"; env?: NodeJS.ProcessEnv } = {},
): Promise<StartedToolbus> {
  const child = startProcess(args, options);
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const deadline = Date.now() + 100_000;
  while (!output.includes("Toolbus is running")) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`npm start did not come up:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, exited, output: () => output };
}

/** The pids of DynamoDB Local JVMs listening on the given port, read from /proc. */
export async function jvmsOnPort(port: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    // The supervisor shell carries the same arguments: only the JVM itself counts.
    const name = await readFile(`/proc/${entry}/comm`, "utf8").catch(() => "");
    if (name.trim() !== "java") continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const args = cmdline.split("\0");
    const at = args.indexOf("-port");
    if (args.some((a) => a.endsWith("DynamoDBLocal.jar")) && args[at + 1] === port) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

/**
 * `npm start -- <args>` as a user (or a supervisor) runs it, or its entry point under `node`
 * directly; `env` replaces variables of this process's environment.
 */
export function startProcess(
  args: readonly string[],
  options: { via?: "node" | "npm"; env?: NodeJS.ProcessEnv } = {},
): ChildProcess {
  const env = { ...process.env, ...options.env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  return options.via === "npm"
    ? spawn("npm", ["start", "--", ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
    : spawn(process.execPath, ["--import", "tsx", START, ...args], {
        cwd: ROOT,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
}

/** Whether a process is alive (and not a zombie). */
export async function alive(pid: number): Promise<boolean> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return status !== "" && !/^State:\s+Z/m.test(status);
}
