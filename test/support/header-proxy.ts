import { createServer, request } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface HeaderProxy {
  /** `target` with the proxy's origin: same path and query. */
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback reverse proxy that adds `headers` to every request and forwards everything else
 * as received, streaming both ways (SSE answers and long-lived GET streams pass through as
 * they are written). For clients that cannot send a header themselves, such as the
 * conformance suite and an API key.
 *
 * `Host` and `Origin` are forwarded unchanged on purpose: a DNS-rebinding probe must reach
 * the target with the values it chose, not with ones the proxy made up.
 */
export async function startHeaderProxy(
  target: string,
  headers: Record<string, string>,
): Promise<HeaderProxy> {
  const upstream = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, ...lowerCased(headers) },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        // Headers first: an SSE stream may send nothing for a while, and the client waits
        // for the status before it reads events.
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // A client that goes away takes its upstream request with it, so no stream stays open.
    res.on("close", () => forwarded.destroy());
    req.pipe(forwarded);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
}
