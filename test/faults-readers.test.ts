import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEndpoints, readEndpoints, spawnToolbus } from "./support/npm-start";
import { callConcurrently, readWithCursor } from "./support/run-readers";
import { SseReader } from "./support/sse";

/**
 * Readers of one run against the real `npm start` process, from outside, while many clients
 * write to the run at once: every reader gets every event exactly once, in the log's order,
 * with a call's scheduling before its result. Its own DynamoDB Local, on disk.
 */
const READERS = 50;
const POLLERS = 10;
const CALLS = 40;
const WRITERS = 8;
const TEXT = "The cat sat on the mat. It was happy there.";

let child: ChildProcess | undefined;
let exited: Promise<unknown> | undefined;
let stateDir: string;
let endpoints: LocalEndpoints;
let adminKey: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "toolbus-readers-"));
  const started = await spawnToolbus(["--port", "0", "--state-dir", stateDir]);
  child = started.child;
  exited = started.exited;
  endpoints = await readEndpoints(stateDir);
  adminKey = (await readFile(join(stateDir, "admin-key"), "utf8")).trim();
}, 120_000);

afterAll(async () => {
  if (child?.exitCode === null) {
    child.kill("SIGINT");
    await exited;
  }
  await rm(stateDir, { recursive: true, force: true });
});

const request = (path: string, key: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${endpoints.api}${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.json === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });

async function createKey(role: string): Promise<{ key: string; keyId: string }> {
  const response = await request("/v1/keys", adminKey, {
    method: "POST",
    json: { name: `reader-${role}`, role },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; keyId: string };
}

const follow = (runId: string, key: string) =>
  fetch(`${endpoints.api}/v1/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
  });

const callInto = (runId: string) =>
  callConcurrently(
    (callId) =>
      request(`/v1/runs/${runId}/calls`, adminKey, {
        method: "POST",
        json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait: 10 },
      }),
    { calls: CALLS, writers: WRITERS },
  );

interface Logged {
  eventKey: string;
  detailType: string;
  detail: { callId: string };
}

/** The whole stored log, once it holds every call's two events. */
async function storedLog(runId: string): Promise<Logged[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await request(`/v1/runs/${runId}/events?limit=1000`, adminKey);
    const { events } = (await response.json()) as { events: Logged[] };
    if (events.length >= 2 * CALLS || Date.now() > deadline) return events;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Each call's scheduling comes before its result, and no event twice. */
function expectWellOrdered(log: Logged[]): void {
  expect(new Set(log.map((event) => event.eventKey)).size).toBe(log.length);
  const scheduledAt = new Map<string, number>();
  log.forEach((event, index) => {
    if (event.detailType === "ToolCallScheduled") scheduledAt.set(event.detail.callId, index);
    else expect(scheduledAt.get(event.detail.callId)).toBeLessThan(index);
  });
}

describe("readers of a run in npm start", { timeout: 120_000 }, () => {
  it("give 50 event streams every event exactly once, in the log's order, under 8 writers", async () => {
    const runId = `streams-${Date.now()}`;
    // The per-key limit is 20 streams: the readers share three viewer keys.
    const keys = await Promise.all([0, 1, 2].map(() => createKey("viewer")));
    const responses = await Promise.all(
      Array.from({ length: READERS }, (_, index) =>
        follow(runId, (keys[index % 3] as { key: string }).key),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    const readers = responses.map((response) => new SseReader(response));
    try {
      await callInto(runId);
      const log = await storedLog(runId);
      expect(log).toHaveLength(2 * CALLS);
      expectWellOrdered(log);
      const expected = log.map((event) => event.eventKey);
      await Promise.all(
        readers.map((reader) =>
          reader.until(() => reader.frames.length >= expected.length, 20_000),
        ),
      );
      for (const reader of readers) {
        const seen = reader.frames.map((frame) => (JSON.parse(frame.data) as Logged).eventKey);
        expect(seen).toEqual(expected);
      }
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });

  it("give readers paging with ?cursor= every 100 ms every event exactly once, in order", async () => {
    const runId = `pages-${Date.now()}`;
    let writing = true;
    const pollers = Array.from({ length: POLLERS }, () =>
      readWithCursor((query) => request(`/v1/runs/${runId}/events${query}`, adminKey), {
        everyMs: 100,
        done: () => !writing,
      }),
    );
    await callInto(runId);
    const log = await storedLog(runId);
    writing = false;
    expect(log).toHaveLength(2 * CALLS);
    expectWellOrdered(log);
    const expected = log.map((event) => event.eventKey);
    for (const seen of await Promise.all(pollers)) expect(seen).toEqual(expected);
  });

  it("refuses a key's 21st stream, and ends a revoked key's streams within seconds", async () => {
    const runId = `revoked-${Date.now()}`;
    const { key, keyId } = await createKey("viewer");
    const open = await Promise.all(Array.from({ length: 20 }, () => follow(runId, key)));
    expect(open.map((response) => response.status)).toEqual(open.map(() => 200));
    const refused = await follow(runId, key);
    expect(refused.status).toBe(429);
    await refused.body?.cancel();

    const readers = open.map((response) => new SseReader(response));
    try {
      const revokedAt = Date.now();
      expect((await request(`/v1/keys/${keyId}`, adminKey, { method: "DELETE" })).status).toBe(200);
      await Promise.all(readers.map((reader) => reader.until(() => reader.done, 10_000)));
      expect(Date.now() - revokedAt).toBeLessThan(5_000);
      for (const reader of readers) {
        expect(reader.frames.at(-1)?.event).toBe("error");
        expect(reader.frames.at(-1)?.data).toContain("unauthorized");
      }
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });
});
