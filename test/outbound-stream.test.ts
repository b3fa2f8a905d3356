import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createGzip } from "node:zlib";
import { createHttpClient, type HttpClient } from "@toolbus/core/outbound";
import { afterEach, describe, expect, it } from "vitest";
import { failure, outboundConfig } from "./support/outbound";

/** A request the server received, and when its connection closed. */
interface Arrived {
  method: string;
  path: string;
  closed: Promise<void>;
}

interface Upstream {
  origin: string;
  seen: Arrived[];
}

type Handler = (request: IncomingMessage, response: ServerResponse) => unknown;

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A real HTTP server on loopback that notes every request and when its socket closes. */
async function upstream(handler: Handler): Promise<Upstream> {
  const seen: Arrived[] = [];
  const server = createServer((request, response) => {
    const closed = new Promise<void>((resolve) => request.socket.once("close", () => resolve()));
    seen.push({ method: request.method ?? "", path: request.url ?? "", closed });
    response.on("error", () => {});
    void handler(request, response);
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
  return { origin: `http://127.0.0.1:${port}`, seen };
}

/** A promise the test settles: how a server waits for the reader before writing more. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Reads until the text so far contains `wanted`; fails instead of hanging on a buffered body. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  wanted: string,
  timeoutMs = 2_000,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  while (!text.includes(wanted)) {
    const left = deadline - Date.now();
    const chunk = await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`no ${JSON.stringify(wanted)} yet: ${text}`)), left),
      ),
    ]);
    if (chunk.done) throw new Error(`ended before ${JSON.stringify(wanted)}: ${text}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return text + decoder.decode();
    text += decoder.decode(chunk.value, { stream: true });
  }
}

/** Waits for `closed`, failing the test rather than hanging when the connection stays open. */
function withinSeconds(closed: Promise<void> | undefined, seconds = 2): Promise<void> {
  return Promise.race([
    closed ?? Promise.reject(new Error("no request arrived")),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the connection stayed open")), seconds * 1000),
    ),
  ]);
}

function client(
  overrides: Parameters<typeof outboundConfig>[0] = {},
): Required<Pick<HttpClient, "open">> {
  const { open } = createHttpClient(outboundConfig(overrides));
  if (!open) throw new Error("the outbound client cannot stream");
  return { open };
}

/** A server that sends one chunk and then keeps the connection open without a byte more. */
const stalls: Handler = (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.write("data: first\n\n");
};

describe("outbound stream: the body as it arrives", () => {
  it("delivers an event before the server has written the next one", async () => {
    const secondMayFollow = gate();
    const server = await upstream(async (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n");
      await secondMayFollow.opened;
      response.end("data: two\n\n");
    });

    const stream = await client().open(`${server.origin}/events`);
    const reader = stream.body.getReader();

    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    expect(stream.url).toBe(`${server.origin}/events`);
    expect(await readUntil(reader, "data: one\n\n")).toBe("data: one\n\n");
    secondMayFollow.open();
    expect(await readToEnd(reader)).toBe("data: two\n\n");
  });

  it("decodes a gzip body chunk by chunk, as the server flushes it", async () => {
    const restMayFollow = gate();
    const server = await upstream(async (_request, response) => {
      response.writeHead(200, { "content-encoding": "gzip" });
      const gzip = createGzip();
      gzip.pipe(response);
      gzip.write("data: compressed one\n\n");
      gzip.flush();
      await restMayFollow.opened;
      gzip.end("data: compressed two\n\n");
    });

    const reader = (await client().open(server.origin)).body.getReader();

    expect(await readUntil(reader, "one\n\n")).toBe("data: compressed one\n\n");
    restMayFollow.open();
    expect(await readToEnd(reader)).toBe("data: compressed two\n\n");
  });

  it("bounds only the wait for the headers by timeoutMs, not the whole body", async () => {
    const server = await upstream(async (_request, response) => {
      response.writeHead(200);
      for (let i = 0; i < 5; i++) {
        response.write(`tick ${i}\n`);
        await new Promise((resolve) => setTimeout(resolve, 80));
      }
      response.end("done\n");
    });

    const stream = await client().open(server.origin, { timeoutMs: 150, idleTimeoutMs: 1_000 });

    expect(await readToEnd(stream.body.getReader())).toMatch(/tick 4\ndone\n$/);
  });

  it("follows a 303 after a POST with a bodiless GET and reports the final URL", async () => {
    const server = await upstream((request, response) => {
      if (request.url === "/submit") {
        response.writeHead(303, { location: "/stream" });
        response.end();
      } else {
        response.end("streamed");
      }
    });

    const stream = await client().open(`${server.origin}/submit`, { method: "POST", body: "{}" });

    expect(stream.url).toBe(`${server.origin}/stream`);
    expect(await readToEnd(stream.body.getReader())).toBe("streamed");
    expect(server.seen.map((seen) => `${seen.method} ${seen.path}`)).toEqual([
      "POST /submit",
      "GET /stream",
    ]);
  });
});

describe("outbound stream: limits", () => {
  it("errors with too_large once the decoded bytes pass maxBytes, and closes the connection", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200);
      // No Content-Length: only counting what arrives can stop it.
      const timer = setInterval(() => response.write(Buffer.alloc(1024, 120)), 5);
      response.on("close", () => clearInterval(timer));
    });

    const stream = await client().open(server.origin, { maxBytes: 10_000 });

    const error = await failure(readToEnd(stream.body.getReader()));
    expect(error.kind).toBe("too_large");
    await withinSeconds(server.seen[0]?.closed);
  });

  it("errors with timeout when no byte arrives within idleTimeoutMs", async () => {
    const server = await upstream(stalls);

    const stream = await client().open(server.origin, { idleTimeoutMs: 150 });
    const reader = stream.body.getReader();
    await readUntil(reader, "first");

    const error = await failure(reader.read());
    expect(error.kind).toBe("timeout");
    await withinSeconds(server.seen[0]?.closed);
  });

  it("rejects with timeout when the headers do not arrive within timeoutMs", async () => {
    const server = await upstream(() => {});

    const error = await failure(client().open(server.origin, { timeoutMs: 150 }));

    expect(error.kind).toBe("timeout");
  });
});

describe("outbound stream: SSRF guard and network switch", () => {
  it.each([
    ["a private address", "http://10.0.0.1/"],
    ["a loopback address that is not allowed", "http://127.0.0.2/"],
  ])("rejects %s with blocked before connecting", async (_name, url) => {
    const error = await failure(client().open(url));
    expect(error.kind).toBe("blocked");
  });

  it("rejects an allowed server's own address once allowHosts no longer names it", async () => {
    const server = await upstream((_request, response) => response.end("reached"));

    const error = await failure(client({ allowHosts: [] }).open(server.origin));

    expect(error.kind).toBe("blocked");
    expect(server.seen).toHaveLength(0);
  });

  it("refuses a redirect to a blocked address", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(302, { location: "http://10.0.0.1/internal" });
      response.end();
    });

    const error = await failure(client().open(server.origin));

    expect(error.kind).toBe("blocked");
    expect(server.seen).toHaveLength(1);
  });

  it("fails fast with network when the stage has networking off", async () => {
    const server = await upstream((_request, response) => response.end("reached"));

    const error = await failure(client({ networkEnabled: false }).open(server.origin));

    expect(error.kind).toBe("network");
    expect(server.seen).toHaveLength(0);
  });
});

describe("outbound stream: ending early", () => {
  it("errors with aborted when the caller's signal fires mid-body, and closes the connection", async () => {
    const server = await upstream(stalls);
    const controller = new AbortController();

    const stream = await client().open(server.origin, { signal: controller.signal });
    const reader = stream.body.getReader();
    await readUntil(reader, "first");
    controller.abort();

    const error = await failure(reader.read());
    expect(error.kind).toBe("aborted");
    await withinSeconds(server.seen[0]?.closed);
  });

  it("closes the connection when the reader cancels the body", async () => {
    const server = await upstream(stalls);

    const stream = await client().open(server.origin);
    const reader = stream.body.getReader();
    await readUntil(reader, "first");
    await reader.cancel();

    await withinSeconds(server.seen[0]?.closed);
  });

  it("keeps the connection open while the body is neither read to its end nor cancelled", async () => {
    const server = await upstream(stalls);

    const stream = await client().open(server.origin, { idleTimeoutMs: 5_000 });
    await readUntil(stream.body.getReader(), "first");

    // The counterpart of the two tests above: without cancel or abort, the socket stays up.
    await expect(withinSeconds(server.seen[0]?.closed, 0.3)).rejects.toThrow(/stayed open/);
  });
});
