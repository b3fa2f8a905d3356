import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpClient } from "@toolbus/core/outbound";
import { NOBODY_WAITS } from "@toolbus/core/relay/link";
import { type ToolContext, toolSpecOf } from "@toolbus/core/tool-definition";
import { toolSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { checkLink } from "./check";
import { mapWithConcurrency } from "./concurrency";
import { linkValidator } from "./link-validator";
import { LINK_CONCURRENCY, linkValidatorInput, linkValidatorOutput } from "./schemas";

/** What the upstream saw: method, path and Range header of each request, in order. */
let seen: { method: string; path: string; range?: string }[] = [];
let inFlight = 0;
let maxInFlight = 0;

function upstream(req: IncomingMessage, res: ServerResponse) {
  const path = req.url ?? "/";
  seen.push({
    method: req.method ?? "",
    path,
    ...(req.headers.range ? { range: req.headers.range } : {}),
  });
  const send = (status: number, headers: Record<string, string> = {}, body = "") => {
    res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
    res.end(req.method === "HEAD" ? undefined : body);
  };
  if (path.startsWith("/slow-ok/")) {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      send(200);
    }, 80);
    return;
  }
  switch (path) {
    case "/ok":
      return send(200, {}, "<p>hello</p>");
    case "/pdf":
      return send(200, { "content-type": "application/pdf" });
    case "/no-head":
      // Like many app servers: HEAD is not routed, GET works.
      if (req.method === "HEAD") return send(405, { allow: "GET" });
      return send(req.headers.range ? 206 : 200, {}, "x");
    case "/no-head-big":
      if (req.method === "HEAD") return send(501);
      return send(200, {}, "z".repeat(200 * 1024));
    case "/head-reset":
      if (req.method === "HEAD") return void req.socket.destroy();
      return send(200, {}, "fine");
    case "/empty":
      if (req.method === "HEAD") return send(405);
      return send(416, { "content-range": "bytes */0" });
    case "/a":
      return send(301, { location: "/b" });
    case "/b":
      return send(302, { location: `http://127.0.0.1:${port}/c` });
    case "/c":
      return send(200, { "content-type": "text/plain" });
    case "/gone":
      return send(404, {}, "not here");
    case "/moved-to-gone":
      return send(308, { location: "/gone" });
    case "/broken-server":
      return send(503);
    case "/hang":
      return; // never answers
    case "/loop":
      return send(302, { location: "/loop" });
    case "/to-metadata":
      return send(302, { location: "http://169.254.169.254/latest/meta-data/iam/" });
    case "/bad-redirect":
      return send(302, { location: "http://[bad" });
    case "/not-modified":
      return send(304);
    default:
      return send(404);
  }
}

let server: Server;
let port: number;
let base: string;

beforeAll(async () => {
  server = createServer(upstream);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  inFlight = 0;
  maxInFlight = 0;
});

const http = createHttpClient({
  userAgent: "test",
  allowHosts: ["127.0.0.1"],
  defaultTimeoutMs: 2000,
  defaultMaxBytes: 1_000_000,
  networkEnabled: true,
});

function context(signal = new AbortController().signal): ToolContext<undefined> {
  return {
    callId: "call-1",
    parentRunId: "run-1",
    progress: () => undefined,
    caller: NOBODY_WAITS,
    signal,
    settings: undefined,
    http,
    secret: () => undefined,
    now: () => new Date(),
  };
}

async function validate(urls: string[], extra: Record<string, unknown> = {}) {
  const outcome = await linkValidator.execute(
    linkValidatorInput.parse({ urls, ...extra }),
    context(),
  );
  expect(linkValidatorOutput.safeParse(outcome.data).success).toBe(true);
  return outcome;
}

async function one(path: string, extra: Record<string, unknown> = {}) {
  const { data } = await validate([path.startsWith("http") ? path : `${base}${path}`], extra);
  return data.results[0];
}

describe("link_validator", () => {
  it("answers a working link from HEAD alone, with status, type and latency", async () => {
    const result = await one("/pdf");
    expect(result).toEqual({
      url: `${base}/pdf`,
      reachable: true,
      status: 200,
      finalUrl: `${base}/pdf`,
      redirects: [],
      contentType: "application/pdf",
      latencyMs: expect.any(Number),
    });
    expect(seen).toEqual([{ method: "HEAD", path: "/pdf" }]);
  });

  it("falls back to a one-byte GET when HEAD answers 405", async () => {
    const result = await one("/no-head");
    expect(result).toMatchObject({
      reachable: true,
      status: 206,
      note: "HEAD answered 405; checked with GET",
    });
    expect(result?.error).toBeUndefined();
    expect(seen).toEqual([
      { method: "HEAD", path: "/no-head" },
      { method: "GET", path: "/no-head", range: "bytes=0-0" },
    ]);
  });

  it("falls back to GET when the server hangs up on HEAD", async () => {
    const result = await one("/head-reset");
    expect(result).toMatchObject({
      reachable: true,
      status: 200,
      note: "HEAD failed; checked with GET",
    });
  });

  it("counts a GET fallback that streams more than it needs as reachable, status unconfirmed", async () => {
    const result = await one("/no-head-big");
    expect(result).toMatchObject({
      reachable: true,
      note: expect.stringContaining("status not confirmed"),
    });
    expect(result?.status).toBeUndefined();
  });

  it("counts an empty resource (416 to the one-byte range) as reachable", async () => {
    const result = await one("/empty");
    expect(result).toMatchObject({ reachable: true, status: 416 });
    expect(result?.error).toBeUndefined();
  });

  it("records the whole redirect chain and the final URL", async () => {
    const result = await one("/a");
    expect(result).toMatchObject({
      reachable: true,
      status: 200,
      finalUrl: `${base}/c`,
      redirects: [`${base}/a`, `${base}/b`],
      contentType: "text/plain",
    });
  });

  it("reports a 404 as broken with the status line", async () => {
    expect(await one("/gone")).toMatchObject({
      reachable: false,
      status: 404,
      error: { kind: "http", message: "404 Not Found" },
    });
  });

  it("reports a redirect to a 404 as broken, with where it led", async () => {
    const { data, output } = await validate([`${base}/moved-to-gone`]);
    expect(data.results[0]).toMatchObject({
      reachable: false,
      status: 404,
      finalUrl: `${base}/gone`,
      redirects: [`${base}/moved-to-gone`],
    });
    expect(output).toContain(
      `- ${base}/moved-to-gone — 404 Not Found (after redirects to ${base}/gone)`,
    );
  });

  it("reports a 5xx without retrying it", async () => {
    expect(await one("/broken-server")).toMatchObject({
      reachable: false,
      status: 503,
      error: { kind: "http", message: "503 Service Unavailable" },
    });
    expect(seen).toHaveLength(1);
  });

  it("counts a 3xx that is not a redirect as reachable", async () => {
    expect(await one("/not-modified")).toMatchObject({ reachable: true, status: 304 });
  });

  it("reports a timeout when the link does not answer within timeout_ms", async () => {
    const started = Date.now();
    expect(await one("/hang", { timeout_ms: 500 })).toMatchObject({
      reachable: false,
      error: { kind: "timeout" },
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("reports a redirect loop as too_many_redirects", async () => {
    expect(await one("/loop")).toMatchObject({
      reachable: false,
      error: { kind: "too_many_redirects" },
    });
  });

  it("reports a redirect to the metadata address as blocked, without following it", async () => {
    expect(await one("/to-metadata")).toMatchObject({
      reachable: false,
      error: { kind: "blocked", message: expect.stringContaining("may not reach") },
    });
  });

  it("reports private and metadata addresses given directly as blocked", async () => {
    const { data } = await validate([
      "http://169.254.169.254/latest/meta-data/",
      "http://10.1.2.3/",
    ]);
    expect(data.results.map((r) => r.error?.kind)).toEqual(["blocked", "blocked"]);
  });

  it("reports an invalid redirect target as invalid_url", async () => {
    expect(await one("/bad-redirect")).toMatchObject({ error: { kind: "invalid_url" } });
  });

  it("reports a refused connection as a network error without trying GET", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await one(`http://127.0.0.1:${closedPort}/`)).toMatchObject({
      reachable: false,
      error: { kind: "network", message: expect.stringContaining("ECONNREFUSED") },
    });
  });

  it("checks a mixed batch in one successful call, broken links listed first", async () => {
    const urls = [
      `${base}/ok`,
      `${base}/gone`,
      `${base}/a`,
      "http://169.254.169.254/",
      `${base}/loop`,
    ];
    const { data, output } = await validate(urls);
    expect(data.results.map((r) => r.url)).toEqual(urls);
    expect(data.summary).toEqual({ total: 5, reachable: 2, broken: 2, blocked: 1 });
    expect(output.split("\n")[0]).toBe("Checked 5 links: 2 reachable, 2 broken, 1 blocked.");
    const at = (text: string) => output.indexOf(text);
    expect(at("Broken:")).toBeLessThan(at("Blocked (not checked):"));
    expect(at("Blocked (not checked):")).toBeLessThan(at("Reachable:"));
    expect(output).toContain(`- ${base}/gone — 404 Not Found`);
    expect(output).toContain(`- ${base}/loop — too_many_redirects:`);
    expect(output).toContain(`- ${base}/a → ${base}/c (2 redirects) — 200, text/plain,`);
  });

  it("checks each distinct URL once, keeping the first spelling and the order", async () => {
    const { data } = await validate([
      `${base}/ok`,
      `${base}/pdf`,
      `${base}/ok`,
      `HTTP://127.0.0.1:${port}/pdf`,
    ]);
    expect(data.results.map((r) => r.url)).toEqual([`${base}/ok`, `${base}/pdf`]);
    expect(seen.map((s) => s.path)).toEqual(["/ok", "/pdf"]);
  });

  it(`never has more than ${LINK_CONCURRENCY} checks in flight`, async () => {
    const urls = Array.from({ length: 17 }, (_, i) => `${base}/slow-ok/${i}`);
    const { data } = await validate(urls);
    expect(data.summary.reachable).toBe(17);
    expect(maxInFlight).toBeLessThanOrEqual(LINK_CONCURRENCY);
    expect(maxInFlight).toBeGreaterThan(1);
  });

  it("ends a check as a timeout without a request once the call is aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await checkLink(http, `${base}/ok`, 1_000, controller.signal);
    expect(result).toMatchObject({
      reachable: false,
      error: { kind: "timeout", message: "not checked before the call's time budget ran out" },
    });
    expect(seen).toEqual([]);
  });

  it("ends a check in flight as a timeout when the call is aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await checkLink(http, `${base}/hang`, 5_000, controller.signal);
    expect(result).toMatchObject({
      reachable: false,
      error: { kind: "timeout", message: "not checked before the call's time budget ran out" },
    });
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  describe("input schema", () => {
    it("takes 1 to 50 http(s) URLs and a per-link timeout with a default and a cap", () => {
      expect(linkValidatorInput.parse({ urls: ["https://a.example/"] })).toEqual({
        urls: ["https://a.example/"],
        timeout_ms: 5_000,
      });
      const fifty = Array.from({ length: 50 }, (_, i) => `https://a.example/${i}`);
      expect(linkValidatorInput.safeParse({ urls: fifty }).success).toBe(true);
    });

    it.each([
      { urls: [] },
      { urls: Array.from({ length: 51 }, (_, i) => `https://a.example/${i}`) },
      { urls: ["ftp://a.example/file"] },
      { urls: ["javascript:alert(1)"] },
      { urls: ["a.example/page"] },
      { urls: ["https://a.example/"], timeout_ms: 60_000 },
      { urls: ["https://a.example/"], timeout_ms: 10 },
      { urls: ["https://a.example/"], method: "POST" },
      { url: "https://a.example/" },
    ])("rejects %j", (input) => {
      expect(linkValidatorInput.safeParse(input).success).toBe(false);
    });

    it("accepts every example in the spec", () => {
      const examples = linkValidator.spec.examples ?? [];
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples) {
        expect(linkValidatorInput.safeParse(example.input).success).toBe(true);
      }
    });
  });

  it("publishes a valid catalog spec", () => {
    const spec = toolSpecOf(linkValidator);
    expect(toolSpec.parse(spec)).toEqual(spec);
    expect(spec).toMatchObject({
      id: "link_validator",
      toolset: "link_validator",
      category: "reference",
      requires: ["network"],
      annotations: { readOnly: true, openWorld: true, idempotent: true },
      cache: { ttlSeconds: 600, keyFields: ["urls"] },
      timeoutMs: 30_000,
      version: "1",
    });
    expect(spec.inputSchema).toMatchObject({
      type: "object",
      properties: { urls: { type: "array", minItems: 1, maxItems: 50 } },
      required: ["urls"],
    });
  });
});

describe("mapWithConcurrency", () => {
  it("keeps input order and the limit, and handles an empty list", async () => {
    let running = 0;
    let peak = 0;
    const out = await mapWithConcurrency([30, 10, 20, 5, 1], 2, async (ms, i) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, ms));
      running--;
      return i;
    });
    expect(out).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(await mapWithConcurrency([], 3, async () => 1)).toEqual([]);
  });
});
