import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createToolbusClient } from "./client.js";
import { ToolbusClientError } from "./errors.js";

// The follower's reconnection rules against a loopback server that answers from a script: what
// a real server only does under failure (ending mid-page, erroring, dropping the connection,
// refusing) is spelled out here byte by byte. test/client.test.ts follows the real API.

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

/** One answer: an event stream's text, a JSON status, or the connection dropped unanswered. */
type Scripted = string | { status: number; body: unknown } | "drop";

const servers: Upstream[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/**
 * A loopback server answering each request with the next scripted answer; past the script, an
 * event stream that stays open and silent. `lastEventIds` is what each request resumed from.
 */
async function scriptedServer(script: Scripted[]) {
  const server = await startUpstream((_request, response) => {
    const next = script.shift();
    if (next === undefined) {
      response.writeHead(200, { "content-type": "text/event-stream" }).flushHeaders();
    } else if (next === "drop") {
      response.socket?.destroy();
    } else if (typeof next === "string") {
      response.writeHead(200, { "content-type": "text/event-stream" }).end(next);
    } else {
      response
        .writeHead(next.status, { "content-type": "application/json" })
        .end(JSON.stringify(next.body));
    }
  });
  servers.push(server);
  const lastEventIds = () =>
    server.requests.map((request) => request.headers["last-event-id"] ?? null);
  return { server, lastEventIds };
}

/** A client of the scripted server: no `/health` asked for a streaming URL. */
function client(server: Upstream) {
  return createToolbusClient({ baseUrl: server.origin, streamUrl: false, apiKey: "k" });
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
    const { server, lastEventIds } = await scriptedServer([
      // A page [a] with its cursor, then the stream ends in the middle of the page [b, c].
      frame(a, "cur-a") + frame(b),
      // The server resends the page after cur-a whole.
      frame(b) + frame(c, "cur-c"),
    ]);
    const stream = client(server).events("run-1", { follow: true, reconnectDelayMs: 0 });
    expect(await take(stream, 3)).toEqual([a.eventKey, b.eventKey, c.eventKey]);
    expect(lastEventIds()).toEqual([null, "cur-a"]);
    expect(server.requests[0]?.url.pathname).toBe("/v1/runs/run-1/events");
    expect(stream.cursor).toBe("cur-c");
  });

  it("starts from the given cursor and sends it as Last-Event-ID", async () => {
    const { server, lastEventIds } = await scriptedServer([frame(event("x"), "cur-x")]);
    const stream = client(server).events("run-1", { follow: true, cursor: "cur-0" });
    expect(await take(stream, 1)).toEqual([event("x").eventKey]);
    expect(lastEventIds()).toEqual(["cur-0"]);
  });

  it("reconnects after an error frame and after a network failure", async () => {
    const a = event("a");
    const b = event("b", "ToolResultReceived");
    const { server, lastEventIds } = await scriptedServer([
      `${frame(a, "cur-a")}event: error\ndata: {"error":{"code":"internal","message":"stopped"}}\n\n`,
      "drop",
      { status: 503, body: { error: { code: "unavailable", message: "try later" } } },
      frame(b, "cur-b"),
    ]);
    const stream = client(server).events("run-1", { follow: true, reconnectDelayMs: 1 });
    expect(await take(stream, 2)).toEqual([a.eventKey, b.eventKey]);
    expect(lastEventIds()).toEqual([null, "cur-a", "cur-a", "cur-a"]);
  });

  it("gives up after maxRetries failures in a row with the last error", async () => {
    const { server } = await scriptedServer([
      "drop",
      { status: 503, body: { error: { code: "unavailable", message: "try later" } } },
    ]);
    const stream = client(server).events("run-1", {
      follow: true,
      reconnectDelayMs: 1,
      maxRetries: 1,
    });
    const error = await take(stream, 1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolbusClientError);
    expect(error).toMatchObject({ status: 503, code: "unavailable" });
  });

  it("does not retry what cannot succeed: a refused key", async () => {
    const { server, lastEventIds } = await scriptedServer([
      { status: 401, body: { error: { code: "unauthorized", message: "no" } } },
    ]);
    const stream = client(server).events("run-1", { follow: true, reconnectDelayMs: 1 });
    await expect(take(stream, 1)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    expect(lastEventIds()).toHaveLength(1);
  });

  it("rejects an event that is not a run event", async () => {
    const { server } = await scriptedServer(['event: ToolCallScheduled\ndata: {"eventKey":1}\n\n']);
    const stream = client(server).events("run-1", { follow: true });
    await expect(take(stream, 1)).rejects.toMatchObject({ code: "invalid_response" });
  });

  it("ends quietly when the signal fires while waiting for events", async () => {
    const { server } = await scriptedServer([frame(event("a"), "cur-a")]);
    const controller = new AbortController();
    const stream = client(server).events("run-1", {
      follow: true,
      reconnectDelayMs: 0,
      signal: controller.signal,
    });
    const keys: string[] = [];
    const reading = (async () => {
      for await (const item of stream) keys.push(item.eventKey);
    })();
    // The first stream ended after its event; the follower is back on a stream that is silent.
    await vi.waitFor(() => expect(server.requests).toHaveLength(2), { timeout: 5_000 });
    controller.abort();
    await reading;
    expect(keys).toEqual([event("a").eventKey]);
  });
});
