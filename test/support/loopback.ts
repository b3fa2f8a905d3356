import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A test server listening on 127.0.0.1. */
export interface Loopback {
  /** http://127.0.0.1:<port><path> */
  url: string;
  port: number;
  /** Destroys every socket the server holds, then closes it. */
  close(): Promise<void>;
}

/** Serves one request; a thrown error is answered 500 (or ends a started answer). */
export type Serve = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** An HTTP server on 127.0.0.1, on a free port, for `serve`; its URL ends with `path`. */
export async function listenOnLoopback(serve: Serve, path = "/mcp"): Promise<Loopback> {
  const http = createServer((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  http.listen(0, "127.0.0.1");
  return closableOnLoopback(http, path);
}

/**
 * A server created elsewhere (say, by @hono/node-server's `serve`) on 127.0.0.1, once it
 * listens, closed with every socket it holds.
 */
export async function closableOnLoopback(http: Server, path = "/mcp"): Promise<Loopback> {
  const sockets = new Set<Socket>();
  http.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  if (!http.listening) await new Promise<void>((resolve) => http.once("listening", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        http.close(() => resolve());
      }),
  };
}
