import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LAUNCHER_FIXTURE = fileURLToPath(
  new URL("./fixtures/start-dynamodb-local.ts", import.meta.url),
);

export interface LauncherChild {
  child: ChildProcess;
  /** The JVM's pid, as reported by the child once DynamoDB Local answered. */
  jvmPid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs test/support/fixtures/start-dynamodb-local.ts in its own Node process (node runs it
 * directly through tsx, so the pid we signal is the launcher's parent itself, not an npx
 * wrapper) and resolves once it has reported the JVM's pid.
 */
export function startLauncherChild(args: string[] = []): Promise<LauncherChild> {
  const child = spawn(process.execPath, ["--import", "tsx", LAUNCHER_FIXTURE, ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );

  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once("line", (line) => {
      lines.close();
      resolve({ child, jvmPid: (JSON.parse(line) as { pid: number }).pid, exited });
    });
    void exited.then(({ code, signal }) =>
      reject(
        new Error(`Fixture exited (code ${code}, signal ${signal}) before reporting:\n${stderr}`),
      ),
    );
  });
}
