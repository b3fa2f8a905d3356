import { createServer, type Server } from "node:net";
import {
  DynamoDbLocalStartError,
  JavaNotFoundError,
  startDynamoDbLocal,
} from "@toolbus/local/dynamodb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalRuntimeError } from "../packages/local/src/errors";
import { type LauncherChild, startLauncherChild } from "./support/fixture-process";
import { isRunning, processGroupOf, runningInGroup, waitUntilGone } from "./support/processes";

const CHILD_TEST_TIMEOUT_MS = 60_000;
const INSTALL_HINTS = ["apt-get install -y openjdk-17-jre-headless", "brew install openjdk@17"];

async function waitUntilGroupEmpty(groupId: number, timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = runningInGroup(groupId);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = runningInGroup(groupId);
  }
  return left;
}

describe("stopping DynamoDB Local", () => {
  it("leaves no JVM and no supervisor behind once stop() resolves, and can be called twice", async () => {
    const db = await startDynamoDbLocal();
    const groupId = processGroupOf(db.pid);
    expect(isRunning(db.pid)).toBe(true);

    await db.stop();
    // stop() promises the JVM has exited by now, so no polling for the JVM itself.
    expect(isRunning(db.pid)).toBe(false);
    expect(await waitUntilGroupEmpty(groupId)).toEqual([]);
    await expect(db.stop()).resolves.toBeUndefined();
  });
});

describe("a parent process that goes away", () => {
  let launched: LauncherChild | undefined;

  afterEach(() => {
    // A failed test must not leave its child (and so its JVM) running.
    if (launched?.child.exitCode === null && launched.child.signalCode === null) {
      launched.child.kill("SIGKILL");
    }
    launched = undefined;
  });

  it(
    "takes its JVM with it when killed with SIGKILL, through the watchdog",
    async () => {
      launched = await startLauncherChild();
      const groupId = processGroupOf(launched.jvmPid);

      launched.child.kill("SIGKILL");
      expect(await launched.exited).toEqual({ code: null, signal: "SIGKILL" });

      expect(await waitUntilGone(launched.jvmPid)).toBe(true);
      expect(await waitUntilGroupEmpty(groupId)).toEqual([]);
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  it(
    "takes its JVM with it when SIGTERM kills it and it did not opt in to signal handling",
    async () => {
      launched = await startLauncherChild();

      launched.child.kill("SIGTERM");
      expect(await launched.exited).toEqual({ code: null, signal: "SIGTERM" });

      expect(await waitUntilGone(launched.jvmPid)).toBe(true);
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  it.each([
    { signal: "SIGTERM" as const, exitCode: 143 },
    { signal: "SIGINT" as const, exitCode: 130 },
  ])(
    "stops its JVM on $signal and exits with $exitCode when it opted in with stopOnSignals",
    async ({ signal, exitCode }) => {
      launched = await startLauncherChild(["--stop-on-signals"]);
      const groupId = processGroupOf(launched.jvmPid);

      launched.child.kill(signal);
      expect(await launched.exited).toEqual({ code: exitCode, signal: null });

      // The handler awaited stop() before exiting, so the JVM is already gone.
      expect(isRunning(launched.jvmPid)).toBe(false);
      expect(await waitUntilGroupEmpty(groupId)).toEqual([]);
    },
    CHILD_TEST_TIMEOUT_MS,
  );
});

describe("starting without a usable environment", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("explains how to install Java when the javaPath option points nowhere", async () => {
    const start = startDynamoDbLocal({ javaPath: "/nonexistent/bin/java" });

    const error = await start.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(JavaNotFoundError);
    expect(error).toBeInstanceOf(LocalRuntimeError);
    const { message } = error as JavaNotFoundError;
    expect(message).toContain("Java 17+ is needed for DynamoDB Local");
    expect(message).toContain("/nonexistent/bin/java");
    for (const hint of INSTALL_HINTS) expect(message).toContain(hint);
  });

  it("honours TOOLBUS_JAVA when choosing the java binary", async () => {
    vi.stubEnv("TOOLBUS_JAVA", "/nonexistent/toolbus-java");

    await expect(startDynamoDbLocal()).rejects.toThrow(
      expect.objectContaining({
        name: "JavaNotFoundError",
        message: expect.stringContaining("/nonexistent/toolbus-java"),
      }),
    );
  });

  it("gives up after startTimeoutMs with a DynamoDbLocalStartError and stops the JVM it started", async () => {
    const error = await startDynamoDbLocal({ startTimeoutMs: 500 }).then(
      () => undefined,
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(DynamoDbLocalStartError);
    expect((error as Error).message).toMatch(/did not answer .* within 500 ms/);
    const { pid } = (error as DynamoDbLocalStartError).context;
    expect(typeof pid).toBe("number");
    expect(isRunning(pid as number)).toBe(false);
  });

  it("reports the JVM's own output when the requested port is taken", async () => {
    // Hang up at once: a held connection would keep blocker.close() waiting forever.
    const blocker: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => blocker.listen({ port: 0 }, resolve));
    const address = blocker.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    try {
      const error = await startDynamoDbLocal({ port }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(DynamoDbLocalStartError);
      expect((error as Error).message).toMatch(/exited with code 1/);
      expect((error as Error).message).toMatch(/Address already in use|Failed to bind/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
