import { createApi } from "@toolbus/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callConcurrently } from "./support/run-readers";
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

async function callInto(runId: string): Promise<void> {
  await callConcurrently(
    (callId) =>
      system.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait: 10 },
      }),
    { calls: CALLS, writers: WRITERS },
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
  it("gives 50 polling event streams every event exactly once, in the log's order", {
    timeout: 60_000,
  }, async () => {
    // As on AWS, where the recorder is another process: no append wakes a stream, each one
    // polls, and only reading by place keeps it from passing an entry still being written.
    const { events } = system.toolbus.apiDeps;
    const app = createApi({
      ...system.toolbus.apiDeps,
      events: {
        append: (call, entries) => events.append(call, entries),
        read: events.read.bind(events),
      },
      followIntervalMs: 20,
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
      await callInto(runId);
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
});
