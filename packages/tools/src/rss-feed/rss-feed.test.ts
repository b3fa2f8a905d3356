import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpClient, type HttpClient } from "@toolbus/core/outbound";
import { NOBODY_WAITS } from "@toolbus/core/relay/link";
import { type ToolContext, ToolFailure, toolSpecOf } from "@toolbus/core/tool-definition";
import { toolSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type RssFeedSettings,
  rssFeed,
  rssFeedInput,
  rssFeedOutput,
  rssFeedSettings,
} from "./rss-feed";

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const XML = "application/xml; charset=utf-8";

/** A feed whose only item's title is `title`, bytes in some charset, after `declaration`. */
function encoded(declaration: string, title: number[]): Buffer {
  return Buffer.concat([
    Buffer.from(`${declaration}<rss><channel><title>T</title><item><title>`),
    Buffer.from(title),
    Buffer.from("</title></item></channel></rss>"),
  ]);
}
const requests: string[] = [];

/** The upstream: a real HTTP server on loopback serving real feed documents and misbehaviour. */
function upstream(req: IncomingMessage, res: ServerResponse) {
  const path = req.url ?? "/";
  requests.push(path);
  const send = (status: number, type: string, body: string | Buffer, headers = {}) => {
    res.writeHead(status, { "content-type": type, ...headers });
    res.end(body);
  };
  switch (path.split("?")[0]) {
    case "/rss2.xml":
      return send(200, "application/rss+xml", fixture("rss2.xml"));
    case "/releases/feed.atom":
      return send(200, "application/atom+xml", fixture("atom.xml"));
    case "/rss1.rdf":
      return send(200, "application/rdf+xml", fixture("rss1.xml"));
    case "/laughs.xml":
      return send(200, XML, fixture("billion-laughs.xml"));
    case "/latin1.xml":
      return send(
        200,
        "text/xml; charset=ISO-8859-1",
        Buffer.from(
          '<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><title>Caf\u00e9 cr\u00e8me</title>' +
            "<item><title>Na\u00efve r\u00e9sum\u00e9</title></item></channel></rss>",
          "latin1",
        ),
      );
    case "/declared-latin1.xml":
      return send(
        200,
        "application/xml",
        Buffer.from(
          '<?xml version="1.0" encoding="iso-8859-1"?><rss><channel><title>Gr\u00fc\u00dfe</title></channel></rss>',
          "latin1",
        ),
      );
    case "/shift-jis.xml":
      // "日本語" in Shift_JIS, named only by the XML declaration.
      return send(
        200,
        "application/rss+xml",
        encoded('<?xml version="1.0" encoding="Shift_JIS"?>', [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]),
      );
    case "/windows-1251.xml":
      // "Привет" in windows-1251, named only by the content-type header.
      return send(
        200,
        "application/rss+xml; charset=windows-1251",
        encoded("", [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]),
      );
    case "/moved.xml":
      return send(301, "text/plain", "", { location: "/releases/feed.atom" });
    case "/page.html":
      return send(200, "text/html; charset=utf-8", fixture("not-a-feed.html"));
    case "/truncated.xml":
      return send(200, XML, fixture("rss2.xml").subarray(0, 900));
    case "/garbage.xml":
      return send(200, XML, Buffer.from([0xff, 0xfe, 0x00, 0x13, 0x88, 0x7f, 0x00]));
    case "/empty-feed.xml":
      return send(200, XML, "<rss><channel><title>Quiet</title></channel></rss>");
    case "/huge.xml":
      return send(
        200,
        XML,
        `<rss><channel><title>${"x".repeat(6 * 1024 * 1024)}</title></channel></rss>`,
      );
    case "/huge-chunked.xml": {
      res.writeHead(200, { "content-type": XML });
      const chunk = `<item><title>${"y".repeat(64 * 1024)}</title></item>`;
      let sent = 0;
      const pump = () => {
        while (sent < 100 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end("</channel></rss>");
      };
      res.write("<rss><channel>");
      return pump();
    }
    case "/slow.xml":
      return; // never answers
    case "/error.xml":
      return send(500, "text/plain", "internal error");
    case "/limited.xml":
      return send(429, "text/plain", "slow down", { "retry-after": "120" });
    case "/missing.xml":
      return send(404, "text/plain", "not found");
    case "/forbidden.xml":
      return send(403, "text/plain", "no");
    case "/loop.xml":
      return send(302, "text/plain", "", { location: "/loop.xml" });
    case "/to-private.xml":
      return send(302, "text/plain", "", { location: "http://10.0.0.7/feed.xml" });
    case "/to-metadata.xml":
      return send(302, "text/plain", "", { location: "http://169.254.169.254/latest/meta-data/" });
    default:
      return send(404, "text/plain", "no such path");
  }
}

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(upstream);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(overrides: { defaultTimeoutMs?: number } = {}): HttpClient {
  return createHttpClient({
    userAgent: "test",
    allowHosts: ["127.0.0.1"],
    defaultTimeoutMs: 2000,
    defaultMaxBytes: 1_000_000,
    networkEnabled: true,
    ...overrides,
  });
}

function context(settings: RssFeedSettings = {}, http = client()): ToolContext<RssFeedSettings> {
  return {
    callId: "call-1",
    parentRunId: "run-1",
    progress: () => undefined,
    caller: NOBODY_WAITS,
    signal: new AbortController().signal,
    settings,
    http,
    secret: () => undefined,
    now: () => new Date("2025-03-05T12:00:00Z"),
  };
}

function run(input: unknown, ctx = context()) {
  return rssFeed.execute(rssFeedInput.parse(input), ctx);
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return (error as ToolFailure).failure;
}

describe("rss_feed", () => {
  it("fetches an RSS 2.0 feed and returns its items newest first, with one citation each", async () => {
    const { data, output, citations } = await run({ action: "fetch", url: `${base}/rss2.xml` });
    expect(rssFeedOutput.safeParse(data).success).toBe(true);
    expect(data.feed).toEqual({
      title: "Acme Engineering & Friends",
      link: "https://blog.acme.dev/",
      format: "rss2",
    });
    expect(data.items.map((i) => i.published)).toEqual([
      "2025-03-04T08:15:00.000Z",
      "2025-03-04T01:00:00.000Z",
      "2025-02-28T17:30:00.000Z",
      "2024-12-01T10:00:00.000Z",
      undefined,
      undefined,
    ]);
    // A relative link resolves against the URL the feed was fetched from.
    expect(data.items[2]?.link).toBe(`${base}/2025/02/dc-date`);
    expect(citations).toHaveLength(6);
    expect(citations?.[0]).toEqual({
      title: "It’s time to talk about <caching>",
      url: "https://blog.acme.dev/2025/03/caching",
      snippet: "Caches are hard. Here is why.",
    });
    expect(output).toContain(
      "Feed: [Acme Engineering & Friends](https://blog.acme.dev/) (RSS 2.0, 6 items):",
    );
    expect(output).toContain(
      "- [It’s time to talk about <caching>](https://blog.acme.dev/2025/03/caching) (2025-03-04)\n  Caches are hard. Here is why.",
    );
    expect(output).toContain("- [Second undated post](https://blog.acme.dev/2025/undated-2)");
  });

  it("applies the limit after ordering and says how many there were", async () => {
    const { data, output, citations } = await run({
      action: "fetch",
      url: `${base}/rss2.xml`,
      limit: 2,
    });
    expect(data.items.map((i) => i.title)).toEqual([
      "It’s time to talk about <caching>",
      "Widget 2.3 is out",
    ]);
    expect(citations).toHaveLength(2);
    expect(output).toContain("(RSS 2.0, 2 newest of 6 items)");
  });

  it("reads the configured feed with get_configured", async () => {
    const { data } = await run(
      { action: "get_configured", limit: 1 },
      context({ feedUrl: `${base}/releases/feed.atom` }),
    );
    expect(data).toEqual({
      feed: {
        title: "Release notes — Acme Widget",
        link: "https://acme.dev/releases",
        format: "atom",
      },
      items: [
        {
          title: "v2.3.0",
          link: `${base}/releases/releases/v2.3.0`,
          published: "2025-03-02T10:00:00.000Z",
          summary: "Faster builds.",
          id: "tag:acme.dev,2024:release-2.3.0",
        },
      ],
    });
  });

  it("resolves relative links against the URL that answered after redirects", async () => {
    const { data } = await run({ action: "fetch", url: `${base}/moved.xml` });
    expect(data.items.find((i) => i.title === "v2.3.0")?.link).toBe(
      `${base}/releases/releases/v2.3.0`,
    );
  });

  it("reads RSS 1.0 (RDF)", async () => {
    const { data, citations } = await run({ action: "fetch", url: `${base}/rss1.rdf` });
    expect(data.feed.format).toBe("rss1");
    expect(data.items.map((i) => i.title)).toEqual(["Newer headline", "Older headline"]);
    expect(citations?.map((c) => c.url)).toEqual([
      "https://news.example.org/newer",
      "https://news.example.org/older",
    ]);
  });

  it("decodes feeds in the charset the server or the XML declaration names", async () => {
    const byHeader = await run({ action: "fetch", url: `${base}/latin1.xml` });
    expect(byHeader.data.feed.title).toBe("Café crème");
    expect(byHeader.data.items[0]?.title).toBe("Naïve résumé");
    const byDeclaration = await run({ action: "fetch", url: `${base}/declared-latin1.xml` });
    expect(byDeclaration.data.feed.title).toBe("Grüße");
  });

  it("decodes Shift_JIS and windows-1251 feeds", async () => {
    const japanese = await run({ action: "fetch", url: `${base}/shift-jis.xml` });
    expect(japanese.data.items[0]?.title).toBe("日本語");
    const russian = await run({ action: "fetch", url: `${base}/windows-1251.xml` });
    expect(russian.data.items[0]?.title).toBe("Привет");
  });

  it("answers a feed without items with an empty list", async () => {
    const { data, output, citations } = await run({
      action: "fetch",
      url: `${base}/empty-feed.xml`,
    });
    expect(data).toEqual({ feed: { title: "Quiet", format: "rss2" }, items: [] });
    expect(citations).toEqual([]);
    expect(output).toBe("Feed: Quiet (RSS 2.0) has no items.");
  });

  it("serves a billion-laughs feed without expanding it", async () => {
    const { data, output } = await run({ action: "fetch", url: `${base}/laughs.xml` });
    expect(JSON.stringify(data).length).toBeLessThan(1_000);
    expect(output.length).toBeLessThan(1_000);
    expect(data.items[0]?.title).toBe("&lol9;&lol9;&lol9;");
  });

  describe("failures", () => {
    it("fails unavailable, replan, when get_configured has no configured feed", async () => {
      expect(await failure(run({ action: "get_configured" }, context({})))).toEqual({
        kind: "unavailable",
        message: expect.stringMatching(/no feed is configured on this stage/i),
        retryable: false,
        recovery: "replan",
      });
    });

    it.each([
      ["an HTML page", "/page.html"],
      ["a truncated document", "/truncated.xml"],
      ["binary garbage", "/garbage.xml"],
    ])("fails upstream_error for %s: not an RSS or Atom feed", async (_, path) => {
      expect(await failure(run({ action: "fetch", url: `${base}${path}` }))).toEqual({
        kind: "upstream_error",
        message: `The feed at ${base}${path} is not an RSS or Atom feed.`,
        retryable: false,
        recovery: "correct_call",
      });
    });

    it("fails timeout when the feed does not answer in time", async () => {
      const started = Date.now();
      const result = await failure(
        run(
          { action: "fetch", url: `${base}/slow.xml` },
          context({}, client({ defaultTimeoutMs: 300 })),
        ),
      );
      expect(result).toMatchObject({ kind: "timeout", retryable: true, recovery: "replan" });
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("fails upstream_error, retryable, on a 500 after one retry", async () => {
      const before = requests.filter((p) => p === "/error.xml").length;
      expect(await failure(run({ action: "fetch", url: `${base}/error.xml` }))).toMatchObject({
        kind: "upstream_error",
        retryable: true,
        recovery: "replan",
      });
      expect(requests.filter((p) => p === "/error.xml").length - before).toBe(2);
    });

    it("fails rate_limited with retryAfterMs from Retry-After on a 429", async () => {
      expect(await failure(run({ action: "fetch", url: `${base}/limited.xml` }))).toEqual({
        kind: "rate_limited",
        message: `The feed at ${base}/limited.xml is rate limiting requests.`,
        retryable: true,
        retryAfterMs: 120_000,
        recovery: "replan",
      });
    });

    it.each([
      ["with a Content-Length", "/huge.xml"],
      ["streamed in chunks", "/huge-chunked.xml"],
    ])("fails upstream_error on a body over 5 MB %s", async (_, path) => {
      expect(await failure(run({ action: "fetch", url: `${base}${path}` }))).toMatchObject({
        kind: "upstream_error",
        message: expect.stringContaining("larger than allowed"),
        retryable: false,
      });
    });

    it("fails upstream_error on a redirect loop", async () => {
      expect(await failure(run({ action: "fetch", url: `${base}/loop.xml` }))).toMatchObject({
        kind: "upstream_error",
        message: expect.stringContaining("redirected too many times"),
      });
    });

    it.each([
      ["a private address", "/to-private.xml"],
      ["the cloud metadata address", "/to-metadata.xml"],
    ])("fails unavailable when a redirect leads to %s", async (_, path) => {
      expect(await failure(run({ action: "fetch", url: `${base}${path}` }))).toMatchObject({
        kind: "unavailable",
        message: expect.stringContaining("may not reach"),
        retryable: false,
      });
    });

    it("refuses a private address given directly, without connecting", async () => {
      expect(
        await failure(run({ action: "fetch", url: "http://192.168.1.1/feed.xml" })),
      ).toMatchObject({ kind: "unavailable" });
    });

    it("asks to correct a fetched URL that is 404, but to replan for the configured one", async () => {
      const url = `${base}/missing.xml`;
      expect(await failure(run({ action: "fetch", url }))).toMatchObject({
        kind: "upstream_error",
        recovery: "correct_call",
      });
      expect(
        await failure(run({ action: "get_configured" }, context({ feedUrl: url }))),
      ).toMatchObject({
        kind: "upstream_error",
        recovery: "replan",
      });
    });

    it("reports a 403 as refused access, not as this stage's credentials", async () => {
      expect(await failure(run({ action: "fetch", url: `${base}/forbidden.xml` }))).toEqual({
        kind: "upstream_error",
        message: `The feed at ${base}/forbidden.xml refused access (403).`,
        retryable: false,
        recovery: "correct_call",
      });
    });

    it("never repeats a feed URL's query string (it may hold a token) in a failure", async () => {
      const result = await failure(run({ action: "fetch", url: `${base}/page.html?token=s3cr3t` }));
      expect(result.message).not.toContain("s3cr3t");
      expect(result.message).toContain(`${base}/page.html`);
    });
  });

  describe("schemas", () => {
    it("defaults the limit to 10 and accepts 1 to 50", () => {
      expect(rssFeedInput.parse({ action: "get_configured" })).toEqual({
        action: "get_configured",
        limit: 10,
      });
      expect(
        rssFeedInput.safeParse({ action: "fetch", url: "https://a.example/f", limit: 50 }).success,
      ).toBe(true);
    });

    it.each([
      { action: "fetch" },
      { action: "fetch", url: "ftp://a.example/feed" },
      { action: "fetch", url: "feed.xml" },
      { action: "fetch", url: "https://a.example/f", limit: 0 },
      { action: "fetch", url: "https://a.example/f", limit: 51 },
      { action: "get_configured", url: "https://a.example/f" },
      { action: "list" },
      {},
    ])("rejects %j", (input) => {
      expect(rssFeedInput.safeParse(input).success).toBe(false);
    });

    it("accepts every example in the spec", () => {
      const examples = rssFeed.spec.examples ?? [];
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples)
        expect(rssFeedInput.safeParse(example.input).success).toBe(true);
    });

    it("takes an optional http(s) feedUrl in its settings and nothing else", () => {
      expect(rssFeedSettings.parse({})).toEqual({});
      expect(rssFeedSettings.parse({ feedUrl: "http://blog.example/feed" })).toEqual({
        feedUrl: "http://blog.example/feed",
      });
      expect(rssFeedSettings.safeParse({ feedUrl: "file:///etc/passwd" }).success).toBe(false);
      expect(rssFeedSettings.safeParse({ url: "https://blog.example/feed" }).success).toBe(false);
    });

    it("publishes a valid catalog spec", () => {
      const spec = toolSpecOf(rssFeed);
      expect(toolSpec.parse(spec)).toEqual(spec);
      expect(spec).toMatchObject({
        id: "rss_feed",
        toolset: "rss_feed",
        category: "research",
        requires: ["network"],
        annotations: { readOnly: true, openWorld: true, idempotent: true },
        cache: {
          ttlSeconds: 900,
          keyFields: ["action", "url", "limit"],
          staleIfErrorSeconds: 86_400,
        },
        version: "1",
      });
      expect(spec.guidelines.do.length).toBeGreaterThanOrEqual(3);
      expect(spec.guidelines.dont.length).toBeGreaterThanOrEqual(3);
      expect(spec.setup.map((s) => s.name)).toContain("tools.rss_feed.feedUrl");
    });
  });
});
