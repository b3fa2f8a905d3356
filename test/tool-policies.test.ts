import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { defineTool, secretCapability, type ToolContext, ToolFailure } from "@toolbus/core";
import {
  failureFromOutbound,
  failureFromStatus,
  type OutboundResponse,
} from "@toolbus/core/outbound";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { Failures } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const SECRET = "s3cr3t-value-that-must-never-leak";

/** A loopback upstream whose behaviour each test sets; it counts what reaches it. */
let upstreamStatus = 200;
let upstreamHits = 0;
let server: Server;
let upstreamUrl = "";

const settings = z.object({ url: z.string() });
const quoteSpec = {
  toolset: "test_policies",
  category: "research" as const,
  description: "Fetches a quote from the test upstream.",
  usageHint: "tests",
};
const fetchQuote = async (input: { topic: string }, context: ToolContext<{ url: string }>) => {
  let response: OutboundResponse;
  try {
    response = await context.http.request(`${context.settings.url}?topic=${input.topic}`, {
      headers: { authorization: `Bearer ${context.secret("TEST_SECRET") ?? "none"}` },
      retries: 0,
      signal: context.signal,
    });
  } catch (error) {
    throw failureFromOutbound(error, "The quote service");
  }
  const failure = failureFromStatus(response, "The quote service");
  if (failure) throw failure;
  const { quote } = response.json() as { quote: string };
  return {
    output: quote,
    data: { quote },
    citations: [{ url: `${context.settings.url}/${input.topic}` }],
  };
};

const cachedQuote = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_cached_quote",
    title: "Cached quote",
    cache: { ttlSeconds: 1, staleIfErrorSeconds: 3600 },
  },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  execute: fetchQuote,
});
const limitedQuote = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_limited_quote",
    title: "Limited quote",
    rateLimit: { perTool: { limit: 2, windowSeconds: 3600 } },
  },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  execute: fetchQuote,
});
const personalQuote = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_personal_quote",
    title: "Personal quote",
    rateLimit: { perPrincipal: { limit: 1, windowSeconds: 3600 } },
  },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  execute: fetchQuote,
});
const secretQuote = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_secret_quote",
    title: "Secret quote",
    requires: ["test_secret"],
    fallback: "test_backup",
  },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  execute: fetchQuote,
});
const backup = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_backup",
    title: "Backup",
    description: "Answers when the quote service cannot.",
  },
  input: z.object({ topic: z.string().optional() }),
  output: z.object({ note: z.string() }),
  async execute() {
    return { output: "No quote service; here is a note instead.", data: { note: "backup" } };
  },
});
const strictQuote = defineTool({
  spec: { ...quoteSpec, id: "test_strict_quote", title: "Strict quote", requires: ["test_secret"] },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  async execute() {
    throw new ToolFailure({
      kind: "internal",
      message: "never runs",
      retryable: false,
      recovery: "finish",
    });
  },
});

// A fallback that fails too: the tool's failure says so rather than skipping it in silence.
const brokenBackup = defineTool({
  spec: { ...quoteSpec, id: "test_broken_backup", title: "Broken backup" },
  input: z.object({ topic: z.string().optional() }),
  output: z.object({ note: z.string() }),
  async execute() {
    throw new ToolFailure(Failures.upstreamError("The backup service failed (503)."));
  },
});
const shakyQuote = defineTool({
  spec: {
    ...quoteSpec,
    id: "test_shaky_quote",
    title: "Shaky quote",
    requires: ["test_secret"],
    fallback: "test_broken_backup",
  },
  input: z.object({ topic: z.string() }),
  output: z.object({ quote: z.string() }),
  settings,
  execute: fetchQuote,
});

const tools = [
  ...builtinTools,
  cachedQuote,
  limitedQuote,
  personalQuote,
  secretQuote,
  backup,
  strictQuote,
  brokenBackup,
  shakyQuote,
];
const toolsets = [
  ...builtinToolsets,
  {
    name: "test_policies",
    description: "Policy test tools",
    owner: "tests",
    kind: "builtin" as const,
  },
];
const capabilities = [
  ...builtinCapabilities,
  secretCapability("test_secret", "TEST_SECRET", "A test secret."),
];

async function startUpstream(): Promise<void> {
  server = createServer((req, res) => {
    upstreamHits++;
    if (upstreamStatus !== 200) {
      res.writeHead(upstreamStatus, upstreamStatus === 429 ? { "retry-after": "30" } : {});
      res.end("{}");
      return;
    }
    const auth = req.headers.authorization ?? "";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        quote: `quote (${auth === `Bearer ${SECRET}` ? "authorized" : "anonymous"})`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/quote`;
}

function config() {
  const own = { url: upstreamUrl };
  return {
    outbound: { allowHosts: ["127.0.0.1"] },
    // Only the test tools read a URL; the built-ins refuse settings they do not know.
    tools: Object.fromEntries(
      tools.filter((t) => t.settings === settings).map((t) => [t.spec.id, own]),
    ),
  };
}

type CallView = {
  parentRunId: string;
  status: string;
  callId: string;
  result: {
    output: string;
    cached: boolean;
    stale: boolean;
    failure?: { kind: string; message: string; retryAfterMs?: number };
    fallback?: { from: string; to: string };
  };
};

async function call(
  system: TestToolbus,
  tool: string,
  input: object,
  key?: string,
): Promise<CallView> {
  const runId = system.runId();
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool, input, wait: 10 },
    ...(key ? { key } : {}),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

describe("call policies with secrets set", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    await startUpstream();
    system = await startTestToolbus({
      tools,
      toolsets,
      capabilities,
      config: config(),
      secrets: { TEST_SECRET: SECRET },
    });
  });
  afterAll(async () => {
    await system.stop();
    server.close();
  });

  it("serves a repeated call from the cache: the upstream is called once", async () => {
    upstreamStatus = 200;
    const before = upstreamHits;
    const first = await call(system, "test_cached_quote", { topic: "cache" });
    const second = await call(system, "test_cached_quote", { topic: "cache" });
    expect(upstreamHits - before).toBe(1);
    expect(first.result.cached).toBe(false);
    expect(second.result).toMatchObject({
      cached: true,
      stale: false,
      output: first.result.output,
    });
  });

  it("serves a stale result when the upstream fails after the entry expired", async () => {
    upstreamStatus = 200;
    await call(system, "test_cached_quote", { topic: "stale" });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    upstreamStatus = 500;
    const stale = await call(system, "test_cached_quote", { topic: "stale" });
    expect(stale).toMatchObject({ status: "succeeded", result: { cached: true, stale: true } });
    upstreamStatus = 200;
  });

  it("fails a call over the tool's rate limit with rate_limited and retryAfterMs", async () => {
    upstreamStatus = 200;
    await call(system, "test_limited_quote", { topic: "a" });
    await call(system, "test_limited_quote", { topic: "b" });
    const third = await call(system, "test_limited_quote", { topic: "c" });
    expect(third.status).toBe("failed");
    expect(third.result.failure?.kind).toBe("rate_limited");
    expect(third.result.failure?.retryAfterMs).toBeGreaterThan(0);
  });

  it("limits each principal separately", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "m", role: "member" },
    });
    const { key } = (await created.json()) as { key: string };
    expect((await call(system, "test_personal_quote", { topic: "x" })).status).toBe("succeeded");
    expect((await call(system, "test_personal_quote", { topic: "y" })).result.failure?.kind).toBe(
      "rate_limited",
    );
    expect((await call(system, "test_personal_quote", { topic: "z" }, key)).status).toBe(
      "succeeded",
    );
  });

  it("passes the secret to the upstream but never into results, events or statuses", async () => {
    const result = await call(system, "test_secret_quote", { topic: "auth" });
    expect(result.result.output).toContain("authorized");
    await system.settle();
    const events = await system.request(`/v1/runs/${result.parentRunId}/events`);
    const statuses = await system.request("/v1/capabilities");
    for (const text of [JSON.stringify(result), await events.text(), await statuses.text()]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it("reports capability statuses, and only an admin may refresh them", async () => {
    const listed = (await (await system.request("/v1/capabilities")).json()) as {
      capabilities: Array<{ name: string; available: boolean; source?: string }>;
    };
    expect(listed.capabilities).toContainEqual(
      expect.objectContaining({
        name: "test_secret",
        available: true,
        source: "secret:TEST_SECRET",
      }),
    );
    expect(listed.capabilities).toContainEqual(
      expect.objectContaining({ name: "github_token", available: false }),
    );
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "v", role: "member" },
    });
    const { key } = (await created.json()) as { key: string };
    const refused = await system.request("/v1/capabilities/refresh", { method: "POST", key });
    expect(refused.status).toBe(403);
    const refreshed = await system.request("/v1/capabilities/refresh", { method: "POST" });
    expect(refreshed.status).toBe(200);
  });
});

describe("call policies without the secret", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    if (!server?.listening) await startUpstream();
    system = await startTestToolbus({
      tools,
      toolsets,
      capabilities,
      config: config(),
      secrets: {},
    });
  });
  afterAll(async () => {
    await system.stop();
    server.close();
  });

  it("fails a tool whose capability is missing as unavailable, with the reason", async () => {
    const result = await call(system, "test_strict_quote", { topic: "x" });
    expect(result.status).toBe("failed");
    expect(result.result.failure).toMatchObject({ kind: "unavailable" });
    expect(result.result.failure?.message).toContain("TEST_SECRET is not set");
  });

  it("runs the fallback tool when the tool is unavailable, and says so", async () => {
    const result = await call(system, "test_secret_quote", { topic: "x" });
    expect(result.status).toBe("succeeded");
    expect(result.result.fallback).toMatchObject({ from: "test_secret_quote", to: "test_backup" });
    expect(result.result.output).toContain("note instead");
  });

  it("says why the fallback did not answer when it fails too, and not to count on the tool", async () => {
    const result = await call(system, "test_shaky_quote", { topic: "x" });
    expect(result.status).toBe("failed");
    expect(result.result.fallback).toBeUndefined();
    expect(result.result.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(result.result.failure?.message).toMatch(
      /^test_shaky_quote is unavailable: TEST_SECRET is not set on this stage\. test_shaky_quote's fallback test_broken_backup could not answer either: The backup service failed \(503\)\.$/,
    );
  });
});
