import { Agent, request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Early answers (413, 401 before the body is read, 415) on a keep-alive connection: the
// client sees its status, and the same connection carries its next request.

let system: TestToolbus;
let server: ApiServer;
let port: number;

beforeAll(async () => {
  system = await startTestToolbus();
  server = await serveApi(system.app, { port: 0 });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
  await system?.stop();
}, 60_000);

const OVER_LIMIT = 307 * 1024;

/** One HTTP/1.1 exchange read off a raw socket: status, headers and body. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw keep-alive connection that reads one whole answer (Content-Length) at a time. */
class RawConnection {
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #closed = false;
  #waiter: (() => void) | undefined;

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#waiter?.();
    });
    socket.on("close", () => {
      this.#closed = true;
      this.#waiter?.();
    });
    socket.on("error", () => undefined);
  }

  static open(): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(data: string | Buffer): void {
    this.#socket.write(data);
  }

  async answer(): Promise<Answer> {
    for (;;) {
      const parsed = this.#parse();
      if (parsed) return parsed;
      if (this.#closed) throw new Error("the server closed the connection before answering");
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
  }

  /** Resolves once the server has closed the connection. */
  async ended(): Promise<void> {
    while (!this.#closed) {
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
  }

  close(): void {
    this.#socket.destroy();
  }

  #parse(): Answer | undefined {
    const end = this.#buffer.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.#buffer.subarray(0, end).toString("latin1").split("\r\n");
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const status = Number(statusLine?.split(" ")[1]);
    if (headers["transfer-encoding"] === "chunked") {
      const chunked = this.#chunks(end + 4);
      if (!chunked) return undefined;
      this.#buffer = this.#buffer.subarray(chunked.next);
      return { status, headers, body: chunked.body };
    }
    const length = Number(headers["content-length"] ?? 0);
    if (this.#buffer.length < end + 4 + length) return undefined;
    const body = this.#buffer.subarray(end + 4, end + 4 + length).toString("utf8");
    this.#buffer = this.#buffer.subarray(end + 4 + length);
    return { status, headers, body };
  }

  /** A chunked body from `start`, once its last chunk has arrived. */
  #chunks(start: number): { body: string; next: number } | undefined {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = this.#buffer.indexOf("\r\n", at);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(this.#buffer.subarray(at, lineEnd).toString("latin1"), 16);
      if (this.#buffer.length < lineEnd + 2 + size + 2) return undefined;
      if (size === 0) return { body: Buffer.concat(parts).toString("utf8"), next: lineEnd + 4 };
      parts.push(this.#buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
}

const HEALTH = "GET /health HTTP/1.1\r\nHost: toolbus\r\nConnection: keep-alive\r\n\r\n";

function post(
  path: string,
  body: string,
  headers: Record<string, string>,
  framing: "length" | "chunked" = "length",
): string {
  // Loopback, as a local client names it: /mcp answers no other host (DNS rebinding).
  const { host = "127.0.0.1", ...rest } = headers;
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${host}`,
    "Connection: keep-alive",
    ...Object.entries(rest).map(([name, value]) => `${name}: ${value}`),
    framing === "length"
      ? `Content-Length: ${Buffer.byteLength(body)}`
      : "Transfer-Encoding: chunked",
  ];
  const payload =
    framing === "length" ? body : `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  return `${lines.join("\r\n")}\r\n\r\n${payload}`;
}

const bigJson = (bytes: number) => JSON.stringify({ name: "x".repeat(bytes), role: "viewer" });

describe("early answers on a raw keep-alive connection", () => {
  const cases = [
    {
      name: "413 for a body over the limit (Content-Length)",
      request: () =>
        post("/v1/keys", bigJson(OVER_LIMIT), {
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "application/json",
        }),
      status: 413,
    },
    {
      name: "413 for a body over the limit (chunked)",
      request: () =>
        post(
          "/v1/keys",
          bigJson(OVER_LIMIT),
          { authorization: `Bearer ${system.adminKey}`, "content-type": "application/json" },
          "chunked",
        ),
      status: 413,
    },
    {
      name: "401 before the body is read",
      request: () => post("/v1/keys", bigJson(OVER_LIMIT), { "content-type": "application/json" }),
      status: 401,
    },
    {
      name: "415 for a body that is not JSON",
      request: () =>
        post("/v1/keys", "x".repeat(100_000), {
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "text/plain",
        }),
      status: 415,
    },
    {
      name: "MCP's 415 for a body that is not JSON",
      request: () =>
        post("/mcp", "x".repeat(100_000), {
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "text/plain",
          accept: "application/json, text/event-stream",
        }),
      status: 415,
    },
    {
      name: "MCP's 403 for a page of another site, before its body is read",
      request: () =>
        post("/mcp", bigJson(OVER_LIMIT), {
          host: "evil.example.com",
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        }),
      status: 403,
    },
    {
      name: "MCP's 413 for a body over the limit",
      request: () =>
        post("/mcp", bigJson(OVER_LIMIT), {
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        }),
      status: 413,
    },
  ];

  it.each(cases)("$name, then GET /health on the same socket answers 200", async (entry) => {
    const connection = await RawConnection.open();
    try {
      connection.write(entry.request());
      const first = await connection.answer();
      expect(first.status).toBe(entry.status);
      expect(first.headers.connection).not.toBe("close");
      connection.write(HEALTH);
      const second = await connection.answer();
      expect(second.status).toBe(200);
      expect(JSON.parse(second.body)).toMatchObject({ status: "ok" });
      expect(connection.closed).toBe(false);
    } finally {
      connection.close();
    }
  });

  it("answers a body declared too large to drain at once, closing the connection cleanly", async () => {
    const connection = await RawConnection.open();
    try {
      // Only the head: the answer comes before any of the 64 MB would have been sent.
      connection.write(
        [
          "POST /v1/keys HTTP/1.1",
          "Host: toolbus",
          "Connection: keep-alive",
          `Authorization: Bearer ${system.adminKey}`,
          "Content-Type: application/json",
          `Content-Length: ${64 * 1024 * 1024}`,
          "",
          "",
        ].join("\r\n"),
      );
      const answer = await connection.answer();
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "payload_too_large" } });
      await connection.ended();
    } finally {
      connection.close();
    }
  });
});

describe("a keep-alive agent (node:http) after an early answer", () => {
  function send(
    agent: Agent,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; text: string; socket: unknown }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        { host: "127.0.0.1", port, method, path, agent, headers },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            text += chunk;
          });
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, text, socket: request.socket }),
          );
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  }

  it("sees the 413 and makes its next 20 requests on the same connection", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await send(agent, "POST", "/v1/keys", bigJson(OVER_LIMIT), {
        authorization: `Bearer ${system.adminKey}`,
        "content-type": "application/json",
      });
      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.text)).toMatchObject({ error: { code: "payload_too_large" } });
      for (let n = 0; n < 20; n += 1) {
        const health = await send(agent, "GET", "/health");
        expect(health.status).toBe(200);
        expect(health.socket).toBe(refused.socket);
      }
    } finally {
      agent.destroy();
    }
  });

  it("sees a 401 for an unauthenticated large body and keeps working", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await send(agent, "POST", "/v1/runs/run-conn/calls", bigJson(200_000), {
        "content-type": "application/json",
      });
      expect(refused.status).toBe(401);
      const listed = await send(agent, "GET", "/v1/tools", undefined, {
        authorization: `Bearer ${system.adminKey}`,
      });
      expect(listed.status).toBe(200);
      expect(listed.socket).toBe(refused.socket);
    } finally {
      agent.destroy();
    }
  });
});

describe("Node's fetch (undici, keep-alive by default) after an early answer", () => {
  it("sees every 413, and every request after it succeeds", async () => {
    for (let n = 0; n < 10; n += 1) {
      const refused = await fetch(`${server.url}/v1/keys`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${system.adminKey}`,
          "content-type": "application/json",
        },
        body: bigJson(OVER_LIMIT),
      });
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({ error: { code: "payload_too_large" } });
      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(200);
      await health.body?.cancel();
    }
  });
});
