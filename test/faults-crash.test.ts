import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSweeper, EventPublisher } from "@toolbus/core";
import { createDocumentClient, DynamoCallStore } from "@toolbus/core/store/dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { localEventBridgeClient } from "../packages/local/src/bus";
import { localDynamoDbClient } from "../packages/local/src/dynamodb";
import { jvmsOnPort, type LocalEndpoints, readEndpoints, spawnToolbus } from "./support/npm-start";

/**
 * `npm start` killed outright in the middle of a load, then started again on the same state:
 * whatever the crash left (calls recorded but never announced, claimed but never finished,
 * finished but never announced), the sweeper drives every recorded call to an end, and every
 * one has both its events in the run's log: the bus's journal delivers again what it had
 * accepted but not delivered. Its own DynamoDB Local, on disk, survives the kill.
 */
const TEXT = "The cat sat on the mat. It was happy there.";
const CALLS = 120;
const WRITERS = 8;
const TERMINAL = new Set(["succeeded", "failed"]);

interface Running {
  child: ChildProcess;
  exited: Promise<unknown>;
  endpoints: LocalEndpoints;
}

const children: ChildProcess[] = [];
let stateDir: string | undefined;

async function start(dir: string): Promise<Running> {
  const { child, exited } = await spawnToolbus(["--port", "0", "--state-dir", dir]);
  children.push(child);
  const endpoints = await readEndpoints(dir);
  return { child, exited, endpoints };
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/**
 * Sync and async calls from several clients into one run; `kill` strikes half-way through,
 * and says where the system is afterwards. Then the sweeper (with no grace for lost
 * announcements: a call the kill left running fails once its deadline, its timeout plus
 * 30 s, has passed) runs until every recorded call has ended, and every one must have both
 * its events in the run's log.
 */
async function crashUnderLoad(kill: (running: Running) => Promise<Running>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-crash-"));
  stateDir = dir;
  let current = await start(dir);
  const adminKey = (await readFile(join(dir, "admin-key"), "utf8")).trim();
  const runId = `crash-${Date.now()}`;
  const api = () => current.endpoints.api;

  let next = 0;
  let killed = false;
  const sent = new Set<string>();
  const load = Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < CALLS && !killed) {
        const index = next++;
        const callId = `c${index}`;
        sent.add(callId);
        await fetch(`${api()}/v1/runs/${runId}/calls`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
          body: JSON.stringify({
            tool: "readability_analyzer",
            input: { text: TEXT },
            callId,
            wait: index % 2 === 0 ? 10 : 0,
          }),
        }).catch(() => undefined);
      }
    }),
  );
  while (next < CALLS / 2) await new Promise((resolve) => setTimeout(resolve, 5));
  killed = true;
  current = await kill(current);
  await load;

  const dynamodb = localDynamoDbClient(current.endpoints.dynamodb);
  const eventBridge = localEventBridgeClient({
    endpoint: current.endpoints.eventbridge,
    credentials: current.endpoints.credentials,
  });
  try {
    const calls = new DynamoCallStore({
      client: createDocumentClient(dynamodb),
      tableName: "toolbus-local",
    });
    // The sweeper as it runs once the cut-off calls' deadlines have passed: a call that
    // finished but was not logged when the process died is found where it ran (RUNNING / its
    // deadline), a few minutes later at most.
    const sweep = createSweeper(() => ({
      calls,
      bus: new EventPublisher({ client: eventBridge, busName: current.endpoints.busName }),
      announceAgainAfterMs: 0,
      announceResultAfterMs: 0,
      now: () => new Date(Date.now() + 5 * 60_000),
    }));
    const statuses = new Map<string, string>();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      await sweep().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const callId of sent) {
        if (TERMINAL.has(statuses.get(callId) ?? "")) continue;
        const response = await fetch(`${api()}/v1/runs/${runId}/calls/${callId}`, {
          headers: { authorization: `Bearer ${adminKey}` },
        });
        // A call the crash cut off before it was recorded does not exist: nothing to finish.
        statuses.set(
          callId,
          response.status === 404
            ? "never-recorded"
            : response.status === 200
              ? ((await response.json()) as { status: string }).status
              : `answered ${response.status}`,
        );
      }
      const recorded = [...statuses.values()].filter((status) => status !== "never-recorded");
      if (recorded.every((status) => TERMINAL.has(status))) break;
    }
    const recorded = [...statuses.entries()].filter(([, status]) => status !== "never-recorded");
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.filter(([, status]) => !TERMINAL.has(status))).toEqual([]);

    // Every recorded call's two events, scheduling first, each once, once the recorder has
    // had what the sweep announced.
    const readLog = async () => {
      const log: { eventKey: string; detailType: string; detail: { callId: string } }[] = [];
      let cursor: string | undefined;
      for (;;) {
        const query = cursor ? `?limit=1000&cursor=${cursor}` : "?limit=1000";
        const response = await fetch(`${api()}/v1/runs/${runId}/events${query}`, {
          headers: { authorization: `Bearer ${adminKey}` },
        });
        const page = (await response.json()) as { events: typeof log; cursor: string | null };
        log.push(...page.events);
        if (page.events.length === 0 || !page.cursor) return log;
        cursor = page.cursor;
      }
    };
    const missingFrom = (log: Awaited<ReturnType<typeof readLog>>) =>
      recorded
        .map(([callId]) => callId)
        .filter((callId) => log.filter((event) => event.detail.callId === callId).length !== 2);
    let log = await readLog();
    for (const until = Date.now() + 30_000; missingFrom(log).length > 0 && Date.now() < until; ) {
      // The sweeper keeps running, as it does every minute on a stage.
      await sweep().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      log = await readLog();
    }
    expect(missingFrom(log)).toEqual([]);
    expect(new Set(log.map((event) => event.eventKey)).size).toBe(log.length);
    const scheduled = new Set<string>();
    for (const event of log) {
      if (event.detailType === "ToolCallScheduled") scheduled.add(event.detail.callId);
      else expect(scheduled.has(event.detail.callId)).toBe(true);
    }
  } finally {
    dynamodb.destroy();
    eventBridge.destroy();
    current.child.kill("SIGINT");
    await current.exited;
    await rm(dir, { recursive: true, force: true });
  }
}

describe("a crash under load", { timeout: 240_000 }, () => {
  it("of npm start itself leaves no recorded call unfinished, and every one with both events in the log", async () => {
    await crashUnderLoad(async (first) => {
      first.child.kill("SIGKILL");
      await first.exited;
      return start(stateDir as string);
    });
  });

  it("of the DynamoDB Local JVM alone does the same, while npm start keeps running and starts it again", async () => {
    await crashUnderLoad(async (running) => {
      const [pid] = await jvmsOnPort(new URL(running.endpoints.dynamodb).port);
      process.kill(pid as number, "SIGKILL");
      return running;
    });
  });
});

describe("a restart after an administrator's change", { timeout: 240_000 }, () => {
  it("keeps the change: the seed does not give the tool back to lower roles", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-admin-"));
    try {
      const first = await start(dir);
      const adminKey = (await readFile(join(dir, "admin-key"), "utf8")).trim();
      const as = (key: string) => ({
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
      });
      const read = await fetch(`${first.endpoints.api}/v1/tools/readability_analyzer`, {
        headers: as(adminKey),
      });
      const {
        revision: _revision,
        updatedAt: _updatedAt,
        ...spec
      } = (await read.json()) as Record<string, unknown> & {
        availability: Record<string, unknown>;
      };
      const changed = await fetch(`${first.endpoints.api}/v1/tools/readability_analyzer`, {
        method: "PUT",
        headers: as(adminKey),
        body: JSON.stringify({ ...spec, availability: { ...spec.availability, minRole: "admin" } }),
      });
      expect(changed.status).toBe(200);
      const created = await fetch(`${first.endpoints.api}/v1/keys`, {
        method: "POST",
        headers: as(adminKey),
        body: JSON.stringify({ name: "member", role: "member" }),
      });
      const memberKey = ((await created.json()) as { key: string }).key;
      first.child.kill("SIGINT");
      await first.exited;

      const second = await start(dir);
      try {
        const after = await fetch(`${second.endpoints.api}/v1/tools/readability_analyzer`, {
          headers: as(adminKey),
        });
        expect(((await after.json()) as { availability: unknown }).availability).toMatchObject({
          minRole: "admin",
        });
        const call = await fetch(`${second.endpoints.api}/v1/runs/admin-kept/calls`, {
          method: "POST",
          headers: as(memberKey),
          body: JSON.stringify({ tool: "readability_analyzer", input: { text: "Kept." } }),
        });
        expect(call.status).toBe(403);
      } finally {
        second.child.kill("SIGINT");
        await second.exited;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
