import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { OutboundConfig } from "@toolbus/core/outbound";
import { testToolContext } from "@toolbus/core/testing";
import type { ToolContext } from "@toolbus/core/tool-definition";

/** What a stand-in upstream received. */
export interface RecordedRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Route = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface Upstream {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback standing in for a search engine or GitHub. */
export async function startUpstream(route: Route): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        url: new URL(req.url ?? "/", "http://127.0.0.1"),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      Promise.resolve(route(recorded, res)).catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  response: ServerResponse,
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(typeof body === "string" ? body : JSON.stringify(body));
}

export function sendHtml(response: ServerResponse, html: string, status = 200): void {
  response.writeHead(status, { "content-type": "text/html; charset=UTF-8" });
  response.end(html);
}

/** A fixture under test/fixtures/<tool>/. */
export function fixture(tool: string, name: string): string {
  return readFileSync(
    new URL(`../../../../test/fixtures/${tool}/${name}`, import.meta.url),
    "utf8",
  );
}

/**
 * A context whose HTTP client is the real one, allowed to reach loopback only. `signal`
 * stands in for the tool's timeout.
 */
export function loopbackContext<S>(
  settings: S,
  options: {
    secrets?: Record<string, string>;
    signal?: AbortSignal;
    outbound?: Partial<OutboundConfig>;
    now?: () => Date;
  } = {},
): ToolContext<S> {
  const context = testToolContext(settings, {
    outbound: {
      userAgent: "test",
      allowHosts: ["127.0.0.1"],
      defaultTimeoutMs: 2_000,
      defaultMaxBytes: 1_000_000,
      networkEnabled: true,
      ...options.outbound,
    },
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return options.signal ? { ...context, signal: options.signal } : context;
}
