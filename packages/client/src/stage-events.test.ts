import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createToolbusClient } from "./client.js";
import type { StageEvent } from "./stage-events.js";

// Where the stage's stream starts and what each connection asks for, against a loopback server
// answering from a script: test/cli-listen.test.ts follows the real API.

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

const servers: Upstream[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * A loopback server answering JSON bodies as JSON and strings as event streams, in order; past
 * the script, an event stream that stays open and silent. `seen()` is what each request asked.
 */
async function scriptedServer(script: (string | object)[]) {
  const server = await startUpstream((_request, response) => {
    const next = script.shift();
    if (next === undefined) {
      response.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
    } else if (typeof next === "string") {
      response.writeHead(200, { "content-type": "text/event-stream" }).end(next);
    } else {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(next));
    }
  });
  servers.push(server);
  const seen = (): Seen[] =>
    server.requests.map(({ url, headers }) => ({
      url,
      accept: headers.accept ?? null,
      lastEventId: typeof headers["last-event-id"] === "string" ? headers["last-event-id"] : null,
    }));
  return { server, seen };
}

/** A client of the scripted server: no `/health` asked for a streaming URL. */
function client(server: Upstream) {
  return createToolbusClient({ baseUrl: server.origin, streamUrl: false, apiKey: "k" });
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
    const { server, seen } = await scriptedServer([
      { events: [event("a")], cursor: "7", more: true },
      frame(event("b")) + frame(event("c"), "12"),
    ]);
    const pattern = { detail: { status: ["failed"] } };
    const stream = client(server).stageEvents({
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
    const [opening, following] = seen();
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
    const { server, seen } = await scriptedServer([frame(event("x"), "31")]);
    const stream = client(server).stageEvents({ cursor: "30", pattern: '{"source":["toolbus"]}' });
    expect(await stream.open()).toBe("30");
    expect(seen()).toEqual([]);
    expect(await take(stream, 1)).toEqual([["x", "31"]]);
    expect(seen()).toHaveLength(1);
    expect(seen()[0]).toMatchObject({ accept: "text/event-stream", lastEventId: "30" });
    expect(query(seen()[0] as Seen)).toEqual({ pattern: '{"source":["toolbus"]}' });
  });

  it("fixes its start when opened, before anything is read, and opens once", async () => {
    const { server, seen } = await scriptedServer([
      { events: [], cursor: "40", more: false },
      frame(event("later"), "41"),
    ]);
    const stream = client(server).stageEvents();
    expect(stream.cursor).toBeUndefined();
    expect(await stream.open()).toBe("40");
    expect(await stream.open()).toBe("40");
    expect(seen()).toHaveLength(1);
    expect(query(seen()[0] as Seen)).toEqual({ limit: "1" });
    expect(await take(stream, 1)).toEqual([["later", "41"]]);
    expect(seen()[1]?.lastEventId).toBe("40");
  });

  it("ends quietly when the signal fires before it opened", async () => {
    const { server, seen } = await scriptedServer([]);
    const controller = new AbortController();
    controller.abort();
    const stream = client(server).stageEvents({ signal: controller.signal });
    expect(await take(stream, 1)).toEqual([]);
    expect(seen()).toEqual([]);
  });
});

describe("a page of the stage's events", () => {
  it("sends the query and gives the page as the API answered it", async () => {
    const { server, seen } = await scriptedServer([
      { events: [event("a")], cursor: "9", more: true },
    ]);
    const page = await client(server).stageEventsPage({
      pattern: '{"detail-type":["ToolCallScheduled"]}',
      cursor: "8",
      limit: 10,
    });
    expect(page).toEqual({ events: [event("a")], cursor: "9", more: true });
    expect(query(seen()[0] as Seen)).toEqual({
      pattern: '{"detail-type":["ToolCallScheduled"]}',
      cursor: "8",
      limit: "10",
    });
  });

  it("rejects an answer that is not a page", async () => {
    const { server } = await scriptedServer([{ events: [], cursor: null }]);
    await expect(client(server).stageEventsPage()).rejects.toMatchObject({
      code: "invalid_response",
    });
  });
});
