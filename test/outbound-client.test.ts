import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { createHttpClient, type Resolver } from "@toolbus/core/outbound";
import { afterEach, describe, expect, it, vi } from "vitest";
import { failure, outboundConfig } from "./support/outbound";

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

interface Upstream {
  port: number;
  origin: string;
  seen: Seen[];
}

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A real HTTP server on loopback that records every request it receives. */
async function upstream(handler: Handler): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const index = seen.length;
      seen.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      response.on("error", () => {});
      handler(request, response, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port, origin: `http://127.0.0.1:${port}`, seen };
}

const config = outboundConfig;

const never: Handler = () => {};

describe("outbound client: answers", () => {
  it("returns status, headers and body, and sends User-Agent and Accept-Encoding", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(201, { "content-type": "application/json", "x-upstream": "yes" });
      response.end('{"ok":true}');
    });
    const client = createHttpClient(config());

    const response = await client.request(`${server.origin}/things?q=1`);

    expect(response.status).toBe(201);
    expect(response.headers.get("x-upstream")).toBe("yes");
    expect(response.json()).toEqual({ ok: true });
    expect(response.text()).toBe('{"ok":true}');
    expect(response.url).toBe(`${server.origin}/things?q=1`);
    expect(response.redirects).toEqual([]);
    expect(response.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(server.seen[0]?.headers["user-agent"]).toBe("ToolbusTest/1.0");
    expect(server.seen[0]?.headers["accept-encoding"]).toMatch(/gzip/);
    expect(server.seen[0]?.path).toBe("/things?q=1");
  });

  it("keeps a User-Agent the caller set, and sends a POST body", async () => {
    const server = await upstream((_request, response) => response.end("done"));
    const client = createHttpClient(config());

    await client.request(server.origin, {
      method: "POST",
      headers: { "User-Agent": "Custom/2", "Content-Type": "text/plain" },
      body: "héllo",
    });

    expect(server.seen[0]).toMatchObject({ method: "POST", body: "héllo" });
    expect(server.seen[0]?.headers["user-agent"]).toBe("Custom/2");
  });

  it("answers HEAD without a body even when Content-Length announces one", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-length": String(50 * 1024 * 1024) });
      response.end();
    });
    const response = await createHttpClient(config()).request(server.origin, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.body.byteLength).toBe(0);
  });

  it("decodes gzip, deflate and br bodies", async () => {
    const text = "compressed ".repeat(1000);
    const server = await upstream((request, response) => {
      const encoding = request.url?.slice(1) ?? "";
      const encode = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }[encoding];
      response.writeHead(200, { "content-encoding": encoding });
      response.end(encode?.(Buffer.from(text)));
    });
    const client = createHttpClient(config());
    for (const encoding of ["gzip", "deflate", "br"]) {
      expect((await client.request(`${server.origin}/${encoding}`)).text()).toBe(text);
    }
  });

  it("decodes latin1 when the Content-Type says so and UTF-8 otherwise", async () => {
    const server = await upstream((request, response) => {
      if (request.url === "/latin1") {
        response.writeHead(200, { "content-type": "text/plain; charset=ISO-8859-1" });
        response.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      } else {
        response.writeHead(200, { "content-type": "text/plain; charset=shift_jis" });
        response.end(Buffer.from("café", "utf8"));
      }
    });
    const client = createHttpClient(config());
    expect((await client.request(`${server.origin}/latin1`)).text()).toBe("café");
    expect((await client.request(`${server.origin}/other`)).text()).toBe("café");
  });

  it("throws a SyntaxError from json() on a malformed body", async () => {
    const server = await upstream((_request, response) => response.end("{nope"));
    const response = await createHttpClient(config()).request(server.origin);
    expect(() => response.json()).toThrow(SyntaxError);
  });
});

describe("outbound client: SSRF guard", () => {
  it.each([
    ["127.0.0.1", (port: number) => `http://127.0.0.1:${port}/`],
    ["localhost", (port: number) => `http://localhost:${port}/`],
    ["[::1]", (port: number) => `http://[::1]:${port}/`],
    ["[::ffff:127.0.0.1]", (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ["decimal 2130706433", (port: number) => `http://2130706433:${port}/`],
    ["octal 0177.0.0.1", (port: number) => `http://0177.0.0.1:${port}/`],
    ["hex 0x7f.1", (port: number) => `http://0x7f.1:${port}/`],
    ["169.254.169.254", () => "http://169.254.169.254/latest/meta-data/"],
    ["10.0.0.1", () => "http://10.0.0.1/"],
    ["100.64.0.1", () => "http://100.64.0.1/"],
  ])("refuses %s when allowHosts is empty, before any request is sent", async (_name, url) => {
    const server = await upstream((_request, response) => response.end("reached"));
    const client = createHttpClient(config({ allowHosts: [] }));

    const error = await failure(client.request(url(server.port)));

    expect(error.kind).toBe("blocked");
    expect(server.seen).toHaveLength(0);
  });

  it("refuses a DNS name that resolves to 127.0.0.1", async () => {
    const server = await upstream((_request, response) => response.end("reached"));
    const lookup = vi.fn<Resolver>(async () => [{ address: "127.0.0.1", family: 4 }]);
    const client = createHttpClient(config({ allowHosts: [] }), { lookup });

    const error = await failure(client.request(`http://innocent.example:${server.port}/`));

    expect(error.kind).toBe("blocked");
    expect(lookup).toHaveBeenCalledWith("innocent.example");
    expect(server.seen).toHaveLength(0);
  });

  it("refuses a redirect from an allowed host to the metadata address", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/iam" });
      response.end();
    });
    const client = createHttpClient(config({ allowHosts: ["127.0.0.1"] }));

    const error = await failure(
      client.request(server.origin, { headers: { Authorization: "Bearer sekrit-token" } }),
    );

    expect(error.kind).toBe("blocked");
    expect(server.seen).toHaveLength(1);
    expect(error.message).not.toContain("sekrit");
    expect(JSON.stringify(error.context)).not.toContain("sekrit");
  });

  it("connects to the address it checked, not to a second DNS answer", async () => {
    const server = await upstream((_request, response) => response.end("pinned"));
    let answers = 0;
    const lookup: Resolver = async () => {
      answers += 1;
      // A rebinding resolver: harmless first, internal afterwards.
      return [{ address: answers === 1 ? "127.0.0.1" : "10.0.0.1", family: 4 }];
    };
    const client = createHttpClient(config({ allowHosts: ["127.0.0.1"] }), { lookup });

    const response = await client.request(`http://rebind.example:${server.port}/`);

    expect(response.text()).toBe("pinned");
    expect(answers).toBe(1);
    expect(server.seen[0]?.headers.host).toBe(`rebind.example:${server.port}`);
  });

  it("refuses URLs that are not http(s) or that carry credentials", async () => {
    const client = createHttpClient(config());
    expect((await failure(client.request("file:///etc/passwd"))).kind).toBe("invalid_url");
    expect((await failure(client.request("http://user:pw@127.0.0.1/"))).kind).toBe("invalid_url");
  });

  it("fails fast with network when the stage has networking off, without DNS or a request", async () => {
    const server = await upstream((_request, response) => response.end("reached"));
    const lookup = vi.fn<Resolver>(async () => [{ address: "127.0.0.1", family: 4 }]);
    const client = createHttpClient(config({ networkEnabled: false }), { lookup });

    const error = await failure(client.request(server.origin));

    expect(error.kind).toBe("network");
    expect(error.message).toBe("outbound network access is disabled on this stage");
    expect(lookup).not.toHaveBeenCalled();
    expect(server.seen).toHaveLength(0);
  });
});

describe("outbound client: timeouts, aborts and retries", () => {
  it("times out on a server that never answers, once per attempt", async () => {
    const server = await upstream(never);
    const client = createHttpClient(config());

    const error = await failure(client.request(server.origin, { timeoutMs: 150, retries: 1 }));

    expect(error.kind).toBe("timeout");
    expect(server.seen).toHaveLength(2);
  });

  it("reports aborted as soon as the caller's signal fires, without retrying", async () => {
    const server = await upstream(never);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);

    const error = await failure(
      createHttpClient(config()).request(server.origin, { signal: controller.signal, retries: 3 }),
    );

    expect(error.kind).toBe("aborted");
    expect(server.seen).toHaveLength(1);
  });

  it("does not even start with an already aborted signal", async () => {
    const server = await upstream(never);
    const error = await failure(
      createHttpClient(config()).request(server.origin, { signal: AbortSignal.abort() }),
    );
    expect(error.kind).toBe("aborted");
    expect(server.seen).toHaveLength(0);
  });

  it("stops waiting for Retry-After when the caller aborts", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "5" });
      response.end();
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);

    const error = await failure(
      createHttpClient(config()).request(server.origin, { signal: controller.signal }),
    );

    expect(error.kind).toBe("aborted");
    expect(server.seen).toHaveLength(1);
  });

  it("retries 5xx and returns the first success", async () => {
    const server = await upstream((_request, response, index) => {
      response.statusCode = index < 2 ? 500 : 200;
      response.end(index < 2 ? "broken" : "fine");
    });

    const response = await createHttpClient(config()).request(server.origin);

    expect(response.status).toBe(200);
    expect(response.text()).toBe("fine");
    expect(server.seen).toHaveLength(3);
  });

  it("returns the last 5xx response once the retries are spent", async () => {
    const server = await upstream((_request, response) => {
      response.statusCode = 502;
      response.end("bad gateway");
    });

    const response = await createHttpClient(config()).request(server.origin, { retries: 1 });

    expect(response.status).toBe(502);
    expect(server.seen).toHaveLength(2);
  });

  it("does not retry POST unless retries are given", async () => {
    const server = await upstream((_request, response) => {
      response.statusCode = 500;
      response.end();
    });
    const client = createHttpClient(config());

    expect((await client.request(server.origin, { method: "POST", body: "x" })).status).toBe(500);
    expect(server.seen).toHaveLength(1);
    await client.request(server.origin, { method: "POST", body: "x", retries: 1 });
    expect(server.seen).toHaveLength(3);
  });

  it("honours Retry-After: 1 on 429 and then succeeds", async () => {
    const server = await upstream((_request, response, index) => {
      if (index === 0) {
        response.writeHead(429, { "retry-after": "1" });
        response.end();
      } else {
        response.end("welcome back");
      }
    });

    const response = await createHttpClient(config()).request(server.origin);

    expect(response.status).toBe(200);
    expect(response.text()).toBe("welcome back");
    expect(server.seen).toHaveLength(2);
  });

  it("returns a 429 at once when Retry-After is longer than it may wait", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(429, { "retry-after": "3600" });
      response.end();
    });

    const response = await createHttpClient(config()).request(server.origin);

    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3600");
    expect(server.seen).toHaveLength(1);
  });

  it("reports a refused connection as a network error", async () => {
    const server = await upstream(never);
    await closers.pop()?.();

    const error = await failure(createHttpClient(config()).request(server.origin, { retries: 0 }));

    expect(error.kind).toBe("network");
  });
});

describe("outbound client: size caps", () => {
  it("refuses a body that Content-Length announces as too large", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-length": String(10 * 1024 * 1024) });
      response.write(Buffer.alloc(1024));
    });

    const error = await failure(
      createHttpClient(config()).request(server.origin, { maxBytes: 4096 }),
    );

    expect(error.kind).toBe("too_large");
  });

  it("stops reading an endless body without Content-Length once it passes the cap", async () => {
    const server = await upstream((_request, response) => {
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) {}
        if (!response.destroyed) response.once("drain", pump);
      };
      pump();
    });

    const error = await failure(
      createHttpClient(config()).request(server.origin, { maxBytes: 256 * 1024 }),
    );

    expect(error.kind).toBe("too_large");
  });

  it("applies the cap to the decompressed size of a gzip bomb", async () => {
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024));
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-encoding": "gzip", "content-length": bomb.length });
      response.end(bomb);
    });
    expect(bomb.length).toBeLessThan(1024 * 1024);

    const error = await failure(
      createHttpClient(config()).request(server.origin, { maxBytes: 1024 * 1024 }),
    );

    expect(error.kind).toBe("too_large");
  });
});

describe("outbound client: redirects", () => {
  it("follows redirects, records every hop and checks each one", async () => {
    const server = await upstream((request, response) => {
      const next = { "/a": "/b", "/b": "/c" }[request.url ?? ""];
      if (next) {
        response.writeHead(301, { location: next });
        response.end();
      } else {
        response.end(`at ${request.url}`);
      }
    });

    const response = await createHttpClient(config()).request(`${server.origin}/a`);

    expect(response.text()).toBe("at /c");
    expect(response.url).toBe(`${server.origin}/c`);
    expect(response.redirects).toEqual([`${server.origin}/a`, `${server.origin}/b`]);
  });

  it("turns a POST into a GET without body on 303", async () => {
    const server = await upstream((request, response) => {
      if (request.url === "/submit") {
        response.writeHead(303, { location: "/result" });
        response.end();
      } else {
        response.end("result");
      }
    });

    await createHttpClient(config()).request(`${server.origin}/submit`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });

    expect(server.seen.map((seen) => seen.method)).toEqual(["POST", "GET"]);
    expect(server.seen[1]?.body).toBe("");
    expect(server.seen[1]?.headers["content-type"]).toBeUndefined();
  });

  it("reports a redirect loop as too_many_redirects", async () => {
    const server = await upstream((request, response) => {
      response.writeHead(302, { location: request.url === "/ping" ? "/pong" : "/ping" });
      response.end();
    });

    const error = await failure(createHttpClient(config()).request(`${server.origin}/ping`));

    expect(error.kind).toBe("too_many_redirects");
    expect(server.seen).toHaveLength(6);
  });

  it("returns the 3xx as is when followRedirects is false", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(307, { location: "/elsewhere" });
      response.end("moved");
    });

    const response = await createHttpClient(config()).request(server.origin, {
      followRedirects: false,
    });

    expect(response.status).toBe(307);
    expect(response.headers.get("location")).toBe("/elsewhere");
    expect(server.seen).toHaveLength(1);
  });

  it("keeps credential headers on the same origin and strips every one on another origin", async () => {
    const other = await upstream((_request, response) => response.end("other"));
    const first = await upstream((request, response) => {
      const location = request.url === "/same" ? "/landing" : `${other.origin}/landing`;
      if (request.url === "/landing") response.end("same");
      else {
        response.writeHead(302, { location });
        response.end();
      }
    });
    const client = createHttpClient(config());
    const headers = {
      Authorization: "Bearer sekrit-token",
      "X-Subscription-Token": "api-key-value",
      Accept: "application/json",
    };

    await client.request(`${first.origin}/same`, { headers });
    const crossed = await client.request(`${first.origin}/cross`, { headers });

    expect(first.seen[1]?.headers.authorization).toBe("Bearer sekrit-token");
    expect(crossed.text()).toBe("other");
    expect(first.seen[2]?.headers.authorization).toBe("Bearer sekrit-token");
    expect(first.seen[1]?.headers["x-subscription-token"]).toBe("api-key-value");
    expect(other.seen[0]?.headers.authorization).toBeUndefined();
    expect(other.seen[0]?.headers["x-subscription-token"]).toBeUndefined();
    expect(other.seen[0]?.headers.accept).toBe("application/json");
  });
});
