import { createApi } from "@toolbus/core/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWithCursor } from "./support/cursor-reader";
import { SseReader } from "./support/sse";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * Many readers of one run while many calls write to it at once: each reader must get every
 * event exactly once, in the log's order. Calls finish and are recorded in any order, and many
 * at once: a reader must never pass a place in the log that is still being written.
 */
const READERS = 50;
const CALLS = 40;
const WRITERS = 8;
const TEXT = "The cat sat on the mat. It was happy there.";

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

async function callConcurrently(runId: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < CALLS) {
        const callId = `c${next++}`;
        const response = await system.request(`/v1/runs/${runId}/calls`, {
          method: "POST",
          json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait: 10 },
        });
        expect(response.status).toBe(200);
      }
    }),
  );
  await system.settle();
}

/** The whole log, read once everything has settled: the order every reader must match. */
async function storedKeys(runId: string): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 400));
  const keys: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const query = cursor ? `?cursor=${cursor}&limit=1000` : "?limit=1000";
    const page = (await (await system.request(`/v1/runs/${runId}/events${query}`)).json()) as {
      events: { eventKey: string }[];
      cursor: string | null;
    };
    keys.push(...page.events.map((event) => event.eventKey));
    if (page.events.length === 0 || !page.cursor) return keys;
    cursor = page.cursor;
  }
}

describe("many readers of one run under concurrent calls", () => {
  it("gives every event stream every event exactly once, in the log's order", {
    timeout: 60_000,
  }, async () => {
    const app = createApi({
      ...system.toolbus.apiDeps,
      followIntervalMs: 2_000,
      maxStreamsPerKey: READERS,
    });
    const runId = system.runId();
    const readers = await Promise.all(
      Array.from({ length: READERS }, async () => {
        const response = await app.request(`/v1/runs/${runId}/events`, {
          headers: { authorization: `Bearer ${system.adminKey}`, accept: "text/event-stream" },
        });
        expect(response.status).toBe(200);
        return new SseReader(response);
      }),
    );
    try {
      await callConcurrently(runId);
      const expected = await storedKeys(runId);
      expect(expected).toHaveLength(2 * CALLS);
      // Every reader reads at once, as separate clients would.
      await Promise.all(
        readers.map((reader) =>
          reader.until(() => reader.frames.length >= expected.length, 20_000),
        ),
      );
      for (const reader of readers) {
        const keys = reader.frames.map(
          (frame) => (JSON.parse(frame.data) as { eventKey: string }).eventKey,
        );
        expect(keys).toEqual(expected);
      }
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });

  it("gives readers paging with ?cursor= every event exactly once, in the log's order", async () => {
    const runId = system.runId();
    let writing = true;
    const pollers = Array.from({ length: 10 }, () =>
      readWithCursor((query) => system.request(`/v1/runs/${runId}/events${query}`), {
        everyMs: 50,
        done: () => !writing,
      }),
    );
    await callConcurrently(runId);
    const expected = await storedKeys(runId);
    writing = false;
    for (const keys of await Promise.all(pollers)) expect(keys).toEqual(expected);
  });
});
