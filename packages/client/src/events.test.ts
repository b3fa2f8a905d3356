import { describe, expect, it } from "vitest";
import { createToolbusClient } from "./client.js";
import { ToolbusClientError } from "./errors.js";

// The follower's reconnection rules against scripted streams: what a real server only does
// under failure (ending mid-page, erroring, refusing) is spelled out here byte by byte.
// test/client.test.ts follows the real API.

function event(
  callId: string,
  type: "ToolCallScheduled" | "ToolResultReceived" = "ToolCallScheduled",
) {
  const eventKey = `run-1/${callId}/${type === "ToolCallScheduled" ? "scheduled" : "result"}`;
  const detail =
    type === "ToolCallScheduled"
      ? {
          eventKey,
          parentRunId: "run-1",
          callId,
          toolId: "static_links",
          toolset: "static_links",
          input: {},
          requestedBy: { id: "p", role: "member" },
          scheduledAt: "2026-01-01T00:00:00.000Z",
        }
      : {
          eventKey,
          parentRunId: "run-1",
          callId,
          toolId: "static_links",
          toolset: "static_links",
          status: "succeeded",
          output: "ok",
          data: {},
          durationMs: 1,
          resultBytes: 2,
          completedAt: "2026-01-01T00:00:00.000Z",
        };
  return { eventKey, detailType: type, occurredAt: "2026-01-01T00:00:00.000Z", detail };
}

function frame(value: ReturnType<typeof event>, id?: string) {
  return `event: ${value.detailType}\ndata: ${JSON.stringify(value)}\n${id ? `id: ${id}\n` : ""}\n`;
}

type Scripted = string | { status: number; body: unknown } | Error;

/** A fetch that answers each request with the next scripted stream, recording Last-Event-ID. */
function scriptedFetch(script: Scripted[]) {
  const lastEventIds: (string | null)[] = [];
  const fetch: typeof globalThis.fetch = async (_input, init) => {
    lastEventIds.push(new Headers(init?.headers).get("last-event-id"));
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
    if (next instanceof Error) throw next;
    if (typeof next === "string") {
      return new Response(next, { headers: { "content-type": "text/event-stream" } });
    }
    return Response.json(next.body, { status: next.status });
  };
  return { fetch, lastEventIds };
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

async function take(iterable: AsyncIterable<{ eventKey: string }>, count: number) {
  const keys: string[] = [];
  for await (const item of iterable) {
    keys.push(item.eventKey);
    if (keys.length === count) break;
  }
  return keys;
}

describe("following a run's events", () => {
  it("resumes from the last id and skips events it already gave after that id", async () => {
    const a = event("a");
    const b = event("b");
    const c = event("c");
    const { fetch, lastEventIds } = scriptedFetch([
      // A page [a] with its cursor, then the stream ends in the middle of the page [b, c].
      frame(a, "cur-a") + frame(b),
      // The server resends the page after cur-a whole.
      frame(b) + frame(c, "cur-c"),
    ]);
    const stream = client(fetch).events("run-1", { follow: true, reconnectDelayMs: 0 });
    expect(await take(stream, 3)).toEqual([a.eventKey, b.eventKey, c.eventKey]);
    expect(lastEventIds).toEqual([null, "cur-a"]);
    expect(stream.cursor).toBe("cur-c");
  });

  it("starts from the given cursor and sends it as Last-Event-ID", async () => {
    const { fetch, lastEventIds } = scriptedFetch([frame(event("x"), "cur-x")]);
    const stream = client(fetch).events("run-1", { follow: true, cursor: "cur-0" });
    expect(await take(stream, 1)).toEqual([event("x").eventKey]);
    expect(lastEventIds).toEqual(["cur-0"]);
  });

  it("reconnects after an error frame and after a network failure", async () => {
    const a = event("a");
    const b = event("b", "ToolResultReceived");
    const { fetch, lastEventIds } = scriptedFetch([
      `${frame(a, "cur-a")}event: error\ndata: {"error":{"code":"internal","message":"stopped"}}\n\n`,
      new TypeError("fetch failed"),
      { status: 503, body: { error: { code: "unavailable", message: "try later" } } },
      frame(b, "cur-b"),
    ]);
    const stream = client(fetch).events("run-1", { follow: true, reconnectDelayMs: 1 });
    expect(await take(stream, 2)).toEqual([a.eventKey, b.eventKey]);
    expect(lastEventIds).toEqual([null, "cur-a", "cur-a", "cur-a"]);
  });

  it("gives up after maxRetries failures in a row with the last error", async () => {
    const { fetch } = scriptedFetch([
      new TypeError("fetch failed"),
      { status: 503, body: { error: { code: "unavailable", message: "try later" } } },
    ]);
    const stream = client(fetch).events("run-1", {
      follow: true,
      reconnectDelayMs: 1,
      maxRetries: 1,
    });
    const error = await take(stream, 1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolbusClientError);
    expect(error).toMatchObject({ status: 503, code: "unavailable" });
  });

  it("does not retry what cannot succeed: a refused key", async () => {
    const { fetch, lastEventIds } = scriptedFetch([
      { status: 401, body: { error: { code: "unauthorized", message: "no" } } },
    ]);
    const stream = client(fetch).events("run-1", { follow: true, reconnectDelayMs: 1 });
    await expect(take(stream, 1)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect(lastEventIds).toHaveLength(1);
  });

  it("rejects an event that is not a run event", async () => {
    const { fetch } = scriptedFetch(['event: ToolCallScheduled\ndata: {"eventKey":1}\n\n']);
    const stream = client(fetch).events("run-1", { follow: true });
    await expect(take(stream, 1)).rejects.toMatchObject({ code: "invalid_response" });
  });

  it("ends quietly when the signal fires while waiting for events", async () => {
    const { fetch } = scriptedFetch([frame(event("a"), "cur-a")]);
    const controller = new AbortController();
    const stream = client(fetch).events("run-1", { follow: true, signal: controller.signal });
    const keys: string[] = [];
    for await (const item of stream) {
      keys.push(item.eventKey);
      setTimeout(() => controller.abort(), 20);
    }
    expect(keys).toEqual([event("a").eventKey]);
  });
});
