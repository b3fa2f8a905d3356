import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { defineTool, type ToolContext } from "@toolbus/core";
import {
  failureFromOutbound,
  failureFromStatus,
  type OutboundResponse,
} from "@toolbus/core/outbound";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunEventView } from "./support/http-calls";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/** A loopback upstream: each test sets how it answers; it counts requests. */
let behaviour: { status: number; delayMs: number; headers?: Record<string, string> } = {
  status: 200,
  delayMs: 0,
};
let hits = 0;
let upstream: Server;
let upstreamUrl = "";

const spec = {
  toolset: "test_upstream",
  category: "research" as const,
  description: "Asks the test upstream.",
  usageHint: "tests",
};
const settings = z.object({ url: z.string() });

function asker(options: { timeoutMs?: number; retries: number }) {
  return async (input: { q: string }, context: ToolContext<{ url: string }>) => {
    let response: OutboundResponse;
    try {
      response = await context.http.request(`${context.settings.url}?q=${input.q}`, {
        retries: options.retries,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        signal: context.signal,
      });
    } catch (error) {
      throw failureFromOutbound(error, "The test upstream");
    }
    const failure = failureFromStatus(response, "The test upstream");
    if (failure) throw failure;
    return { output: "answered", data: { answer: response.text() } };
  };
}

/** Its own request timeout (200 ms) and one retry on 5xx. */
const ask = defineTool({
  spec: { ...spec, id: "test_ask", title: "Ask" },
  input: z.object({ q: z.string() }),
  output: z.object({ answer: z.string() }),
  settings,
  execute: asker({ timeoutMs: 200, retries: 1 }),
});
/** No request timeout: only the tool's own timeout (300 ms) stops a slow upstream. */
const askShort = defineTool({
  spec: { ...spec, id: "test_ask_short", title: "Ask (short)", timeoutMs: 300 },
  input: z.object({ q: z.string() }),
  output: z.object({ answer: z.string() }),
  settings,
  execute: asker({ retries: 0 }),
});

const tools = [...builtinTools, ask, askShort];

interface CallView {
  status: string;
  callId: string;
  result?: {
    status: string;
    failure?: { kind: string; message: string; retryable: boolean; retryAfterMs?: number };
  };
}

describe("upstream faults through the whole call path", () => {
  let system: TestToolbus;

  beforeAll(async () => {
    upstream = createServer((_req, res) => {
      hits++;
      setTimeout(() => {
        res.writeHead(behaviour.status, {
          "content-type": "application/json",
          ...behaviour.headers,
        });
        res.end(JSON.stringify({ ok: behaviour.status === 200 }));
      }, behaviour.delayMs);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/ask`;
    system = await startTestToolbus({
      tools,
      toolsets: [
        ...builtinToolsets,
        { name: "test_upstream", description: "Upstream tools", owner: "tests", kind: "builtin" },
      ],
      config: {
        outbound: { allowHosts: ["127.0.0.1"] },
        tools: { test_ask: { url: upstreamUrl }, test_ask_short: { url: upstreamUrl } },
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });
  beforeEach(() => {
    hits = 0;
    behaviour = { status: 200, delayMs: 0 };
  });

  /** Calls the tool and returns the finished call plus its ToolResultReceived detail. */
  async function call(tool: string) {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool, input: { q: "x" }, wait: 15 },
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    await system.settle();
    const events = await system.request(`/v1/runs/${runId}/events`);
    const log = ((await events.json()) as { events: RunEventView[] }).events;
    const received = log.filter((event) => event.detailType === "ToolResultReceived");
    expect(received).toHaveLength(1);
    return { view, event: received[0]?.detail as CallView["result"] };
  }

  it("succeeds against a healthy upstream (the control case)", async () => {
    const { view } = await call("test_ask");
    expect(view.status).toBe("succeeded");
    expect(hits).toBe(1);
  });

  it("a slow upstream past the request timeout -> timeout, retryable", async () => {
    behaviour = { status: 200, delayMs: 2_000 };
    const { view, event } = await call("test_ask");
    expect(view.status).toBe("failed");
    expect(view.result?.failure).toMatchObject({ kind: "timeout", retryable: true });
    expect(event).toMatchObject({ status: "failed", failure: { kind: "timeout" } });
  });

  it("a slow upstream past the tool's own timeout -> timeout", async () => {
    behaviour = { status: 200, delayMs: 2_000 };
    const started = Date.now();
    const { view, event } = await call("test_ask_short");
    expect(view.result?.failure).toMatchObject({ kind: "timeout" });
    expect(event).toMatchObject({ status: "failed", failure: { kind: "timeout" } });
    // Cut off by the tool's timeout, not by the upstream finally answering.
    expect(Date.now() - started).toBeLessThan(1_900);
  });

  it("an upstream answering 500 -> upstream_error after the bounded retries", async () => {
    behaviour = { status: 500, delayMs: 0 };
    const { view, event } = await call("test_ask");
    expect(view.status).toBe("failed");
    expect(view.result?.failure).toMatchObject({ kind: "upstream_error", retryable: true });
    expect(event).toMatchObject({ failure: { kind: "upstream_error" } });
    expect(hits).toBe(2);
  });

  it("an upstream answering 429 with Retry-After -> rate_limited with retryAfterMs", async () => {
    behaviour = { status: 429, delayMs: 0, headers: { "retry-after": "30" } };
    const { view, event } = await call("test_ask_short");
    expect(view.status).toBe("failed");
    expect(view.result?.failure).toMatchObject({ kind: "rate_limited", retryAfterMs: 30_000 });
    expect(event).toMatchObject({ failure: { kind: "rate_limited", retryAfterMs: 30_000 } });
    expect(hits).toBe(1);
  });
});
