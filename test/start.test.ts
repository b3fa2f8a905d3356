import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { DescribeRuleCommand, ListEventBusesCommand } from "@aws-sdk/client-eventbridge";
import { SUBSCRIPTIONS_RULE } from "@toolbus/core";
import { afterEach, describe, expect, it } from "vitest";
import { localEventBridgeClient } from "../packages/local/src/bus";
import { localDynamoDbClient } from "../packages/local/src/dynamodb";
import { jvmsOnPort, type LocalEndpoints, readEndpoints, spawnToolbus } from "./support/npm-start";

const LocalFile = (dir: string) => join(dir, "local.json");

interface Running {
  child: ChildProcess;
  stateDir: string;
  endpoints: LocalEndpoints;
  exited: Promise<number | null>;
}

const running: Running[] = [];

async function startToolbus(): Promise<Running> {
  const stateDir = await mkdtemp(join(tmpdir(), "toolbus-start-"));
  const { child, exited } = await spawnToolbus(["--memory", "--state-dir", stateDir]);
  const endpoints = await readEndpoints(stateDir);
  const started = { child, stateDir, endpoints, exited };
  running.push(started);
  return started;
}

async function waitUntilGone(port: string): Promise<number[]> {
  for (let i = 0; i < 100; i++) {
    const left = await jvmsOnPort(port);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
  return jvmsOnPort(port);
}

afterEach(async () => {
  for (const { child, stateDir } of running.splice(0)) {
    if (child.exitCode === null) child.kill("SIGKILL");
    await rm(stateDir, { recursive: true, force: true });
  }
});

describe("npm start", { timeout: 120_000 }, () => {
  it("serves the API, DynamoDB Local and the bus at the endpoints it writes to local.json", async () => {
    const { endpoints, stateDir } = await startToolbus();
    const keyFile = join(stateDir, "admin-key");
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const adminKey = (await readFile(keyFile, "utf8")).trim();

    const health = await fetch(`${endpoints.api}/health`);
    expect(await health.json()).toMatchObject({ status: "ok" });
    const call = await fetch(`${endpoints.api}/v1/runs/run-start-1/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        tool: "readability_analyzer",
        input: { text: "One short line." },
        wait: 10,
      }),
    });
    expect(call.status).toBe(200);
    expect(await call.json()).toMatchObject({
      status: "succeeded",
      result: { data: { words: 3 } },
    });
    // The result is stored before the recorder's delivery lands: read until both are logged.
    let log: { events: Array<{ detailType: string }> } = { events: [] };
    for (let attempt = 0; attempt < 100 && log.events.length < 2; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const events = await fetch(`${endpoints.api}/v1/runs/run-start-1/events`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      log = (await events.json()) as typeof log;
    }
    expect(log.events.map((e) => e.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);

    const tables = await localDynamoDbClient(endpoints.dynamodb).send(new ListTablesCommand({}));
    expect(tables.TableNames).toBeInstanceOf(Array);
    const buses = await localEventBridgeClient({
      endpoint: endpoints.eventbridge,
      credentials: endpoints.credentials,
    }).send(new ListEventBusesCommand({}));
    expect(buses.EventBuses?.map((b) => b.Name)).toContain(endpoints.busName);
  });

  it("switches the subscriptions rule on as its API takes a subscription, and leaves it on past the delete", async () => {
    const { endpoints, stateDir } = await startToolbus();
    const adminKey = (await readFile(join(stateDir, "admin-key"), "utf8")).trim();
    const headers = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" };
    const bus = localEventBridgeClient({
      endpoint: endpoints.eventbridge,
      credentials: endpoints.credentials,
    });
    const state = async () =>
      (
        await bus.send(
          new DescribeRuleCommand({ Name: SUBSCRIPTIONS_RULE, EventBusName: endpoints.busName }),
        )
      ).State;
    try {
      // Wired enabled, then set as the sweeper would: nothing subscribes yet.
      expect(await state()).toBe("DISABLED");
      const created = await fetch(`${endpoints.api}/v1/subscriptions`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          name: "every event",
          pattern: { source: ["toolbus"] },
          target: { kind: "webhook", url: "https://hooks.example.com/toolbus" },
        }),
      });
      expect(created.status).toBe(201);
      expect(await state()).toBe("ENABLED");
      const { subscription } = (await created.json()) as { subscription: { id: string } };
      const deleted = await fetch(`${endpoints.api}/v1/subscriptions/${subscription.id}`, {
        method: "DELETE",
        headers,
      });
      expect(deleted.status).toBe(204);
      // Only the sweeper switches it off, on its next run (within a minute): the API never
      // does, so a disable cannot race a create (test/subscriptions-rule.test.ts sweeps).
      expect(await state()).toBe("ENABLED");
    } finally {
      bus.destroy();
    }
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("stops cleanly on %s, leaving no JVM and no endpoints file", async (signal, code) => {
    const { child, stateDir, endpoints, exited } = await startToolbus();
    const port = new URL(endpoints.dynamodb).port;
    expect(await jvmsOnPort(port)).toHaveLength(1);

    child.kill(signal);
    expect(await exited).toBe(code);
    expect(await waitUntilGone(port)).toEqual([]);
    expect(existsSync(LocalFile(stateDir))).toBe(false);
  });

  it("leaves no JVM behind when it is killed outright", async () => {
    const { child, endpoints, exited } = await startToolbus();
    const port = new URL(endpoints.dynamodb).port;
    child.kill("SIGKILL");
    await exited;
    expect(await waitUntilGone(port)).toEqual([]);
  });
});
