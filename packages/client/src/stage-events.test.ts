import { describe, expect, it } from "vitest";
import { createToolbusClient } from "./client.js";
import type { StageEvent } from "./stage-events.js";

// Where the stage's stream starts and what each connection asks for, against scripted answers:
// test/cli-listen.test.ts follows the real API.

function event(callId: string) {
  const eventKey = `run-1/${callId}/scheduled`;
  return {
    eventKey,
    detailType: "ToolCallScheduled" as const,
    occurredAt: "2026-01-01T00:00:00.000Z",
    detail: {
      eventKey,
      parentRunId: "run-1",
      callId,
      toolId: "static_links",
      toolset: "static_links",
      input: {},
      requestedBy: { id: "p", role: "member" },
      scheduledAt: "2026-01-01T00:00:00.000Z",
    },
  };
}

function frame(value: ReturnType<typeof event>, id?: string) {
  return `event: ${value.detailType}\ndata: ${JSON.stringify(value)}\n${id ? `id: ${id}\n` : ""}\n`;
}

interface Seen {
  url: URL;
  accept: string | null;
  lastEventId: string | null;
}

/** Answers JSON bodies as JSON and strings as event streams, in order, recording requests. */
function scriptedFetch(script: (string | object)[]) {
  const seen: Seen[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    seen.push({
      url: new URL(String(input)),
      accept: headers.get("accept"),
      lastEventId: headers.get("last-event-id"),
    });
    const next = script.shift();
    if (next === undefined) {
      // Nothing more scripted: a stream that stays open until the caller goes away.
      return new Response(
        new ReadableStream({
          start(controller) {
            init?.signal?.addEventListener("abort", () => controller.error(new Error("aborted")));
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    if (typeof next === "string") {
      return new Response(next, { headers: { "content-type": "text/event-stream" } });
    }
    return Response.json(next);
  };
  return { fetch, seen };
}

/** Every request goes to the scripted fetch: no `/health` asked for a streaming URL. */
function client(fetch: typeof globalThis.fetch) {
  return createToolbusClient({
    baseUrl: "http://toolbus.test",
    streamUrl: false,
    apiKey: "k",
    fetch,
  });
}

async function take(iterable: AsyncIterable<StageEvent>, count: number) {
  const items: [string, string][] = [];
  for await (const { event: item, cursor } of iterable) {
    items.push([item.detail.callId, cursor]);
    if (items.length === count) break;
  }
  return items;
}

const query = (seen: Seen) => Object.fromEntries(seen.url.searchParams);

describe("following the stage's events", () => {
  it("opens with a one-event page, then follows from its cursor with Last-Event-ID", async () => {
    const { fetch, seen } = scriptedFetch([
      { events: [event("a")], cursor: "7", more: true },
      frame(event("b")) + frame(event("c"), "12"),
    ]);
    const pattern = { detail: { status: ["failed"] } };
    const stream = client(fetch).stageEvents({
      pattern,
      since: new Date("2026-01-01T00:00:00Z"),
      limit: 50,
      reconnectDelayMs: 0,
    });
    expect(await take(stream, 3)).toEqual([
      ["a", "7"],
      // Resuming from a page's cursor gives the page again: b's cursor is the one before it.
      ["b", "7"],
      ["c", "12"],
    ]);
    expect(stream.cursor).toBe("12");
    const [opening, following] = seen;
    expect(opening?.url.pathname).toBe("/v1/events");
    expect(opening?.accept).toBe("application/json");
    expect(query(opening as Seen)).toEqual({
      pattern: JSON.stringify(pattern),
      since: "2026-01-01T00:00:00.000Z",
      limit: "1",
    });
    // The stream resumes from the cursor: `since` has done its work.
    expect(following).toMatchObject({ accept: "text/event-stream", lastEventId: "7" });
    expect(query(following as Seen)).toEqual({ pattern: JSON.stringify(pattern), limit: "50" });
  });

  it("starts from a given cursor without an opening read", async () => {
    const { fetch, seen } = scriptedFetch([frame(event("x"), "31")]);
    const stream = client(fetch).stageEvents({ cursor: "30", pattern: '{"source":["toolbus"]}' });
    expect(await stream.open()).toBe("30");
    expect(seen).toEqual([]);
    expect(await take(stream, 1)).toEqual([["x", "31"]]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ accept: "text/event-stream", lastEventId: "30" });
    expect(query(seen[0] as Seen)).toEqual({ pattern: '{"source":["toolbus"]}' });
  });

  it("fixes its start when opened, before anything is read, and opens once", async () => {
    const { fetch, seen } = scriptedFetch([
      { events: [], cursor: "40", more: false },
      frame(event("later"), "41"),
    ]);
    const stream = client(fetch).stageEvents();
    expect(stream.cursor).toBeUndefined();
    expect(await stream.open()).toBe("40");
    expect(await stream.open()).toBe("40");
    expect(seen).toHaveLength(1);
    expect(query(seen[0] as Seen)).toEqual({ limit: "1" });
    expect(await take(stream, 1)).toEqual([["later", "41"]]);
    expect(seen[1]?.lastEventId).toBe("40");
  });

  it("ends quietly when the signal fires before it opened", async () => {
    const { fetch, seen } = scriptedFetch([]);
    const controller = new AbortController();
    controller.abort();
    const stream = client(fetch).stageEvents({ signal: controller.signal });
    expect(await take(stream, 1)).toEqual([]);
    expect(seen).toEqual([]);
  });
});

describe("a page of the stage's events", () => {
  it("sends the query and gives the page as the API answered it", async () => {
    const { fetch, seen } = scriptedFetch([{ events: [event("a")], cursor: "9", more: true }]);
    const page = await client(fetch).stageEventsPage({
      pattern: '{"detail-type":["ToolCallScheduled"]}',
      cursor: "8",
      limit: 10,
    });
    expect(page).toEqual({ events: [event("a")], cursor: "9", more: true });
    expect(query(seen[0] as Seen)).toEqual({
      pattern: '{"detail-type":["ToolCallScheduled"]}',
      cursor: "8",
      limit: "10",
    });
  });

  it("rejects an answer that is not a page", async () => {
    const { fetch } = scriptedFetch([{ events: [], cursor: null }]);
    await expect(client(fetch).stageEventsPage()).rejects.toMatchObject({
      code: "invalid_response",
    });
  });
});
