import { createApi } from "@toolbus/http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDocumentClient, DynamoKeyStore } from "../packages/core/src/store/dynamodb";
import { testDynamoDbClient } from "./support/dynamodb";
import { SseReader } from "./support/sse";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

interface RunEventView {
  eventKey: string;
  detailType: string;
  occurredAt: string;
  detail: Record<string, unknown>;
}

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

const TEXT = "The cat sat on the mat.";

async function callTool(runId: string, callId: string, wait = 10) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait },
  });
  expect([200, 202]).toContain(response.status);
  await system.settle();
}

/** How long a test waits for a condition it polls for, and how often it looks. */
const WAIT = { timeout: 5_000, interval: 10 };

/**
 * The API with its event log and key store watched, so a test can wait for what a stream is
 * doing instead of for the clock: `reads(runId)` counts finished reads of a run's log,
 * `waits(runId)` the times a follower began waiting for this process's appends to the run,
 * `revocationWatches()` the streams that listen for their key's revocation.
 */
function watchedApi(options: Partial<Parameters<typeof createApi>[0]>) {
  const deps = system.toolbus.apiDeps;
  const { events, keys } = deps;
  const reads = new Map<string, number>();
  const waits = new Map<string, number>();
  const bump = (counts: Map<string, number>, runId: string) =>
    counts.set(runId, (counts.get(runId) ?? 0) + 1);
  let revocationWatches = 0;
  const app = createApi({
    ...deps,
    ...options,
    events: {
      append: (call, entries) => events.append(call, entries),
      read: async (runId, readOptions) => {
        const page = await events.read(runId, readOptions);
        bump(reads, runId);
        return page;
      },
      appended: (runId, signal) => {
        bump(waits, runId);
        return events.appended?.(runId, signal) ?? new Promise<void>(() => undefined);
      },
    },
    // The store's methods run on the store itself: a proxy, not a copy of its fields.
    keys: new Proxy(keys, {
      get(target, name) {
        if (name === "revoked") {
          return (keyId: string, signal: AbortSignal) => {
            revocationWatches++;
            return target.revoked?.(keyId, signal);
          };
        }
        const value = Reflect.get(target, name, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
  });
  return {
    app,
    reads: (runId: string) => reads.get(runId) ?? 0,
    waits: (runId: string) => waits.get(runId) ?? 0,
    revocationWatches: () => revocationWatches,
  };
}

function follow(app: TestToolbus["app"], path: string, headers: Record<string, string> = {}) {
  return app.request(path, {
    headers: {
      authorization: `Bearer ${system.adminKey}`,
      accept: "text/event-stream",
      ...headers,
    },
  });
}

describe("a run's events as JSON pages", () => {
  it("pages through the events in order with a cursor", async () => {
    const runId = system.runId();
    await callTool(runId, "first");
    await callTool(runId, "second");

    const name = (e: RunEventView) => `${e.detail.callId}:${e.detailType}`;
    const pages: string[][] = [];
    const seen: RunEventView[] = [];
    let cursor: string | null = null;
    let ended = false;
    for (let page = 0; page < 10; page++) {
      const query: string = cursor ? `?limit=1&cursor=${encodeURIComponent(cursor)}` : "?limit=1";
      const response = await system.request(`/v1/runs/${runId}/events${query}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { events: RunEventView[]; cursor: string | null };
      if (body.events.length === 0) {
        expect(body.cursor).toBe(cursor);
        ended = true;
        break;
      }
      pages.push(body.events.map(name));
      seen.push(...body.events);
      expect(body.cursor).not.toBe(cursor);
      cursor = body.cursor;
    }
    expect(ended).toBe(true);
    // `limit` counts log entries, and a synchronous call's two events share one: a page is a
    // whole entry, and the cursor past it (its entry's key and last place) resumes at the next.
    // A call slower than the start's announcement window (20 ms, which a starved machine can
    // exceed) logs its start apart: then that call takes two pages, never a page with another's.
    expect(pages.flat()).toEqual([
      "first:ToolCallScheduled",
      "first:ToolResultReceived",
      "second:ToolCallScheduled",
      "second:ToolResultReceived",
    ]);
    for (const page of pages) {
      expect(new Set(page.map((event) => event.split(":")[0])).size, page.join()).toBe(1);
    }
    expect(new Set(seen.map((e) => e.eventKey)).size).toBe(seen.length);
    for (const event of seen) {
      expect(event).toMatchObject({ eventKey: expect.any(String), occurredAt: expect.any(String) });
      expect(event.detail.parentRunId).toBe(runId);
    }
  });

  it("answers an unknown run with no events", async () => {
    const response = await system.request(`/v1/runs/${system.runId()}/events`);
    expect(await response.json()).toEqual({ events: [], cursor: null });
  });

  it("rejects a forged cursor and a limit out of range with 400", async () => {
    const runId = system.runId();
    for (const query of ["?cursor=not-a-cursor", "?limit=0", "?limit=1001", "?limit=ten"]) {
      const response = await system.request(`/v1/runs/${runId}/events${query}`);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe("invalid_request");
    }
  });
});

describe("following a run over text/event-stream", () => {
  it("sends the backlog, then new events live, with detail types, data and resumable ids", async () => {
    const runId = system.runId();
    await callTool(runId, "before");
    const response = await follow(system.app, `/v1/runs/${runId}/events`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const stream = new SseReader(response);
    try {
      await stream.until(() => stream.frames.length >= 2);
      expect(stream.frames.map((f) => f.event)).toEqual([
        "ToolCallScheduled",
        "ToolResultReceived",
      ]);
      const received = JSON.parse(stream.frames[1]?.data ?? "{}") as RunEventView;
      expect(received).toMatchObject({
        detailType: "ToolResultReceived",
        detail: { parentRunId: runId, callId: "before" },
      });
      expect(stream.frames[1]?.id).toEqual(expect.any(String));

      await callTool(runId, "during", 0);
      await stream.until(() => stream.frames.length >= 4);
      expect(
        stream.frames.slice(2).map((f) => `${f.event} ${JSON.parse(f.data).detail.callId}`),
      ).toEqual(["ToolCallScheduled during", "ToolResultReceived during"]);
      expect(stream.frames[3]?.id).toEqual(expect.any(String));
    } finally {
      await stream.cancel();
    }
  });

  it("resumes after Last-Event-ID (or cursor) without repeating what was seen", async () => {
    const runId = system.runId();
    await callTool(runId, "one");
    const first = new SseReader(await follow(system.app, `/v1/runs/${runId}/events`));
    await first.until(() => first.frames.length >= 2);
    await first.cancel();
    const lastId = first.frames[1]?.id as string;

    await callTool(runId, "two");
    for (const [path, headers] of [
      [`/v1/runs/${runId}/events`, { "last-event-id": lastId }],
      [`/v1/runs/${runId}/events?cursor=${encodeURIComponent(lastId)}`, {}],
      // A reconnecting EventSource keeps its old URL: Last-Event-ID wins over it.
      [`/v1/runs/${runId}/events?cursor=bogus`, { "last-event-id": lastId }],
    ] as const) {
      const resumed = new SseReader(await follow(system.app, path, headers));
      await resumed.until(() => resumed.frames.length >= 2);
      await resumed.cancel();
      expect(resumed.frames.map((f) => JSON.parse(f.data).detail.callId)).toEqual(["two", "two"]);
    }
  });

  it("answers a bad cursor with a JSON 400 before opening the stream", async () => {
    const response = await follow(system.app, `/v1/runs/${system.runId()}/events?cursor=bogus`);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/json");
  });

  it("stops polling the event log once the client disconnects", async () => {
    const { app, reads } = watchedApi({ followIntervalMs: 10 });
    const [followed, other] = [system.runId(), system.runId()];
    const stream = new SseReader(await follow(app, `/v1/runs/${followed}/events`));
    // A second follower of the same API polls on throughout: its reads are this test's clock.
    const clock = new SseReader(await follow(app, `/v1/runs/${other}/events`));
    const ticks = async (count: number) => {
      const until = reads(other) + count;
      await vi.waitFor(() => expect(reads(other)).toBeGreaterThanOrEqual(until), WAIT);
    };
    try {
      await vi.waitFor(() => expect(reads(followed)).toBeGreaterThan(2), WAIT);
      await stream.cancel();
      // The server notices on its next wait; a read already under way may still finish.
      await ticks(5);
      const after = reads(followed);
      await ticks(20);
      expect(reads(followed)).toBe(after);
    } finally {
      await clock.cancel();
    }
  });

  it("ends the stream after its maximum duration", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, followIntervalMs: 20, followMaxMs: 300 });
    const started = Date.now();
    const stream = new SseReader(await follow(app, `/v1/runs/${system.runId()}/events`));
    await stream.until(() => false, 3_000);
    expect(stream.done).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("behind a buffering gateway, ends once it has sent events and has the client come back soon", async () => {
    // A maximum duration past the test's own timeout: the stream can only end by sending.
    const { app, waits } = watchedApi({
      followIntervalMs: 20,
      followMaxMs: 60_000,
      followBuffered: true,
    });
    const runId = system.runId();
    const body = Promise.resolve(follow(app, `/v1/runs/${runId}/events`)).then((response) =>
      response.text(),
    );
    // Past its first (empty) read, the stream waits for the run's events: send them now.
    await vi.waitFor(() => expect(waits(runId)).toBeGreaterThan(0), WAIT);
    await callTool(runId, "buffered");
    const text = await body;
    // Both events when the call's runner announced them together (a tool done within 20 ms),
    // the first alone when a slow machine made it announce them apart: either way the stream
    // ended with what it had, and the client comes back for the rest.
    const sent = text.match(/^event: \S+/gm) ?? [];
    expect(sent[0]).toBe("event: ToolCallScheduled");
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.length).toBeLessThanOrEqual(2);
    expect(text).toMatch(/^retry: 20$/m);
  });

  it("closes a stream at once when this process revokes its key, without polling for it", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "follower", role: "viewer" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    // Neither the log nor the key is asked again for a minute: only the revocation can wake it.
    const { app, revocationWatches } = watchedApi({ followIntervalMs: 60_000, keyCheckMs: 60_000 });
    const response = await follow(app, `/v1/runs/${system.runId()}/events`, {
      authorization: `Bearer ${key}`,
    });
    expect(response.status).toBe(200);
    const stream = new SseReader(response);
    try {
      // The stream listens for its key's revocation before anything revokes it.
      await vi.waitFor(() => expect(revocationWatches()).toBe(1), WAIT);
      const revoked = await system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
      expect(revoked.status).toBe(200);
      await stream.until(() => stream.done, 5_000);
      expect(stream.frames.at(-1)?.event).toBe("error");
      expect(JSON.parse(stream.frames.at(-1)?.data ?? "{}")).toMatchObject({
        error: { code: "unauthorized" },
      });
    } finally {
      await stream.cancel();
    }
  });

  it("closes a stream within seconds once its key is revoked by another process", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "follower-elsewhere", role: "viewer" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    const app = createApi({ ...system.toolbus.apiDeps, followIntervalMs: 60_000, keyCheckMs: 200 });
    const stream = new SseReader(
      await follow(app, `/v1/runs/${system.runId()}/events`, { authorization: `Bearer ${key}` }),
    );
    // Another process's key store on the same table: this process hears nothing of it.
    const elsewhere = testDynamoDbClient();
    try {
      const revokedAt = Date.now();
      await new DynamoKeyStore({
        client: createDocumentClient(elsewhere),
        tableName: system.tableName,
      }).revoke(keyId);
      // Found by the stream's own checks, once this process's 5 s key cache lets go.
      await stream.until(() => stream.done, 10_000);
      expect(Date.now() - revokedAt).toBeLessThan(8_000);
      expect(stream.frames.at(-1)?.event).toBe("error");
    } finally {
      elsewhere.destroy();
      await stream.cancel();
    }
  });

  it("refuses a key more event streams than its limit with 429, and frees a slot on close", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, followIntervalMs: 20, maxStreamsPerKey: 2 });
    const path = `/v1/runs/${system.runId()}/events`;
    const first = new SseReader(await follow(app, path));
    const second = new SseReader(await follow(app, path));
    const third = await follow(app, path);
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    await first.cancel();
    // The server notices the closed stream on its next write or wait: ask until it has.
    const again = await vi.waitFor(async () => {
      const response = await follow(app, path);
      expect(response.status).toBe(200);
      return response;
    }, WAIT);
    await new SseReader(again).cancel();
    await second.cancel();
  });

  it("wakes a follower when this process appends to the run, without waiting for the poll", async () => {
    // The next poll is a minute away, past the test's timeout: only the append can wake it.
    const { app, waits } = watchedApi({ followIntervalMs: 60_000 });
    const runId = system.runId();
    const stream = new SseReader(await follow(app, `/v1/runs/${runId}/events`));
    try {
      // Past the first (empty) read: the follower is now waiting for an append.
      await vi.waitFor(() => expect(waits(runId)).toBeGreaterThan(0), WAIT);
      await callTool(runId, "woken");
      await stream.until(() => stream.frames.length >= 2, 5_000);
      expect(stream.frames.map((frame) => frame.event)).toEqual([
        "ToolCallScheduled",
        "ToolResultReceived",
      ]);
    } finally {
      await stream.cancel();
    }
  });

  it("sends keep-alive comments on an idle stream", async () => {
    const app = createApi({ ...system.toolbus.apiDeps, followIntervalMs: 20, keepAliveMs: 50 });
    const stream = new SseReader(await follow(app, `/v1/runs/${system.runId()}/events`));
    try {
      await stream.until(() => stream.comments.length >= 2);
      expect(stream.comments[0]).toBe("keep-alive");
      expect(stream.frames).toEqual([]);
    } finally {
      await stream.cancel();
    }
  });
});
