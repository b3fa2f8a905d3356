import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type ChildGroup, type Leftover, leftovers, spawnGroup } from "./children";

/** DynamoDB Local's JVM, tsx and the catalog seed: a cold start on 2 cores takes a while. */
const STARTUP_TIMEOUT_MS = 90_000;

export interface RunningToolbus {
  /** `http://127.0.0.1:<port>` */
  api: string;
  adminKey: string;
  /** Its DynamoDB Local's endpoint, for the floor route to share. */
  dynamodb: string;
  /** Its state folder (local.json, the data). */
  stateDir: string;
  /** Stops the process group and reports anything still running afterwards. */
  stop(): Promise<Leftover[]>;
}

/**
 * Toolbus as users run it: `npm start` in a fresh state folder, on a free port, with a
 * random admin key and a stage config that lets rss_feed reach the loopback feed server.
 */
export async function startToolbus(options: { memory: boolean }): Promise<RunningToolbus> {
  const stateDir = await mkdtemp(join(tmpdir(), "toolbus-fastpath-"));
  const adminKey = `tbk_bench_${randomBytes(32).toString("base64url")}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TOOLBUS_ADMIN_KEY: adminKey,
    TOOLBUS_CONFIG: JSON.stringify({ stage: "local", outbound: { allowHosts: ["127.0.0.1"] } }),
  };
  // Whatever the caller's shell had must not change what is measured.
  delete env.TOOLBUS_CONFIG_FILE;
  delete env.TOOLBUS_PORT;
  const args = ["start", "--", "--port", "0", "--state-dir", stateDir];
  if (options.memory) args.push("--memory");
  const child = spawnGroup(`npm start${options.memory ? " --memory" : ""}`, "npm", args, env);

  // Known once local.json exists; the JVM lives in a process group of its own, so it is
  // found by its port when checking that nothing was left behind.
  let dynamodbPort: string | undefined;
  const stop = async () => {
    await child.stop();
    const markers = [stateDir, ...(dynamodbPort ? [`-port ${dynamodbPort} `] : [])];
    const left = await leftovers([child.pid], markers);
    for (const process_ of left) {
      // Ours by construction (our state folder or our JVM's port): end them by pid.
      try {
        process.kill(process_.pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    await rm(stateDir, { recursive: true, force: true });
    return left;
  };

  try {
    const state = await waitForStateFile(child, join(stateDir, "local.json"));
    dynamodbPort = new URL(state.dynamodb).port;
    await expectOk(`${state.api}/health`);
    return { api: state.api, dynamodb: state.dynamodb, adminKey, stateDir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `npm start` writes local.json with the API's address once everything is up. */
async function waitForStateFile(
  child: ChildGroup,
  file: string,
): Promise<{ api: string; dynamodb: string }> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.hasExited()) {
      throw new Error(`${child.name} exited during start-up:\n${child.outputTail()}`);
    }
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text) {
      const state = JSON.parse(text) as { api?: string; dynamodb?: string };
      if (state.api && state.dynamodb) return { api: state.api, dynamodb: state.dynamodb };
    }
    await sleep(200);
  }
  throw new Error(
    `${child.name} did not write local.json within ${STARTUP_TIMEOUT_MS / 1000} s:\n${child.outputTail()}`,
  );
}

async function expectOk(url: string): Promise<void> {
  const response = await fetch(url);
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
}

/** A member key made with the admin key: every measured call pays a real key lookup. */
export async function createMemberKey(toolbus: RunningToolbus, name: string): Promise<string> {
  const response = await fetch(`${toolbus.api}/v1/keys`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${toolbus.adminKey}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ name, role: "member" }),
  });
  const body = (await response.json()) as { key?: string };
  if (response.status !== 201 || typeof body.key !== "string") {
    throw new Error(`POST /v1/keys answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.key;
}
