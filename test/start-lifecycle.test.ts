import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  alive,
  jvmsOnPort,
  readEndpoints,
  type StartedToolbus,
  spawnToolbus,
  startProcess,
} from "./support/npm-start";

const dirs: string[] = [];
const started: StartedToolbus[] = [];
afterEach(async () => {
  for (const run of started.splice(0)) run.child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-start-"));
  dirs.push(dir);
  return dir;
}

/** Without any configuration of the test's own environment leaking in. */
const CLEAN = { TOOLBUS_CONFIG: undefined, TOOLBUS_CONFIG_FILE: undefined };

/** What a start that must fail prints, and its exit code. */
async function failedStart(env: NodeJS.ProcessEnv, via: "node" | "npm" = "node") {
  const child = startProcess(["--memory", "--port", "0", "--state-dir", await stateDir()], {
    via,
    env: { ...CLEAN, ...env },
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, output };
}

const portFree = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });

async function until(what: string, check: () => Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("npm start's configuration", () => {
  it("applies a TOOLBUS_CONFIG_FILE, and says where its configuration came from", async () => {
    const dir = await stateDir();
    const file = join(dir, "stage.json");
    await writeFile(
      file,
      JSON.stringify({ modes: { default: "default", available: ["default", "deep"] } }),
    );
    const key = `test-admin-key-${"x".repeat(24)}-end9`;
    const run = await spawnToolbus(["--memory", "--port", "0", "--state-dir", dir], {
      env: { ...CLEAN, TOOLBUS_CONFIG_FILE: file, TOOLBUS_ADMIN_KEY: key },
    });
    started.push(run);
    expect(run.output()).toContain(`Configuration:   TOOLBUS_CONFIG_FILE (${file})`);
    // A key it was given is never printed whole (a service manager's logs keep the output).
    expect(run.output()).not.toContain(key);
    expect(run.output()).toContain("Admin key:       test…end9  (from TOOLBUS_ADMIN_KEY)");
    // The banner ends with something to try, pointing at this run's API.
    const { api } = await readEndpoints(dir);
    expect(run.output()).toContain(
      `Try:\n  curl -s ${api}/v1/tools -H "Authorization: Bearer $TOOLBUS_ADMIN_KEY"`,
    );
    const select = (mode: string) =>
      fetch(`${api}/v1/select`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ mode }),
      });
    // The mode exists only in the file.
    expect((await select("deep")).status).toBe(200);
    expect((await select("shallow")).status).toBe(400);
  }, 120_000);

  it("refuses a typo in either form, and both forms at once, before starting anything", async () => {
    const dir = await stateDir();
    const file = join(dir, "typo.json");
    await writeFile(file, JSON.stringify({ outbond: {} }));
    const fromFile = await failedStart({ TOOLBUS_CONFIG_FILE: file });
    expect(fromFile.code).not.toBe(0);
    expect(fromFile.output).toContain(`TOOLBUS_CONFIG_FILE (${file})`);
    expect(fromFile.output).toContain('did you mean "outbound"?');
    expect(fromFile.output).not.toContain("Toolbus is running");

    const inline = await failedStart({ TOOLBUS_CONFIG: JSON.stringify({ outbond: {} }) });
    expect(inline.code).not.toBe(0);
    expect(inline.output).toContain("(TOOLBUS_CONFIG)");
    expect(inline.output).toContain('did you mean "outbound"?');

    const both = await failedStart({ TOOLBUS_CONFIG: "{}", TOOLBUS_CONFIG_FILE: file });
    expect(both.code).not.toBe(0);
    expect(both.output).toContain("Both TOOLBUS_CONFIG and TOOLBUS_CONFIG_FILE");
  }, 60_000);
});

describe("stopping npm start the way supervisors do", () => {
  const cases = [
    { via: "npm", target: "npm", signal: "SIGINT" },
    { via: "npm", target: "npm", signal: "SIGTERM" },
    { via: "npm", target: "toolbus", signal: "SIGTERM" },
    { via: "node", target: "toolbus", signal: "SIGINT" },
    // A supervisor that kills its child outright: the orphan stops itself.
    { via: "npm", target: "npm", signal: "SIGKILL" },
  ] as const;
  for (const { via, target, signal } of cases) {
    it(`stops everything when ${target === "npm" ? "npm" : via === "npm" ? "the Toolbus process under npm" : "node, started directly,"} gets ${signal}`, async () => {
      const dir = await stateDir();
      // Killed outright on disk: the slowest stop (the JVM flushes), which must not be cut short.
      const storage = signal === "SIGKILL" ? [] : ["--memory"];
      const run = await spawnToolbus([...storage, "--port", "0", "--state-dir", dir], {
        via,
        env: CLEAN,
      });
      started.push(run);
      const endpoints = await readEndpoints(dir);
      const dynamodbPort = new URL(endpoints.dynamodb).port;
      const [jvm] = await jvmsOnPort(dynamodbPort);
      expect(jvm).toBeGreaterThan(0);
      const pid = target === "npm" ? (run.child.pid ?? 0) : endpoints.pid;
      expect(await alive(endpoints.pid)).toBe(true);
      process.kill(pid, signal);
      await until("every process to end", async () => {
        const left = await Promise.all([
          alive(endpoints.pid),
          alive(run.child.pid ?? 0),
          jvmsOnPort(dynamodbPort).then((pids) => pids.length > 0),
        ]);
        return !left.some(Boolean);
      });
      expect(await portFree(endpoints.api)).toBe(true);
      await expect(stat(join(dir, "local.json"))).rejects.toThrow();
    }, 120_000);
  }
});
