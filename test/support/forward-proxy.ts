import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

/** One thing a client asked the proxy for. */
export interface ProxyAsk {
  /** CONNECT for a tunnel; otherwise the method of an absolute-URI request. */
  method: string;
  /** host:port for CONNECT, the absolute URI otherwise. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface ForwardProxyOptions {
  /** Answer every CONNECT with this status instead of opening the tunnel (e.g. 403). */
  refuseConnect?: number;
  /** Require `Proxy-Authorization: Basic base64(user:password)`; 407 otherwise. */
  credentials?: { user: string; password: string };
  /** The proxy's own name resolution: names it reaches at these addresses (like /etc/hosts). */
  hosts?: Record<string, string>;
}

export interface ForwardProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** 127.0.0.1:<port> */
  address: string;
  asks: ProxyAsk[];
  close(): Promise<void>;
}

/**
 * A real HTTP forward proxy on loopback: CONNECT tunnels and absolute-URI requests, each
 * recorded before it is answered. It connects wherever it is asked; what may be reached is the
 * client's business, which is what the tests check.
 */
export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const asks: ProxyAsk[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  };
  const expected = options.credentials
    ? `Basic ${Buffer.from(`${options.credentials.user}:${options.credentials.password}`).toString("base64")}`
    : undefined;
  const authorized = (headers: IncomingHttpHeaders) =>
    expected === undefined || headers["proxy-authorization"] === expected;

  const server = createServer((req, res) => {
    asks.push({ method: req.method ?? "", target: req.url ?? "", headers: req.headers });
    if (!authorized(req.headers)) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("not an absolute URI");
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const upstream = httpRequest(
      {
        hostname: target.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });

  server.on("connect", (req, client: Socket, head: Buffer) => {
    track(client);
    const target = req.url ?? "";
    asks.push({ method: "CONNECT", target, headers: req.headers });
    if (!authorized(req.headers)) {
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    if (options.refuseConnect !== undefined) {
      client.end(`HTTP/1.1 ${options.refuseConnect} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const at = target.lastIndexOf(":");
    const named = target.slice(0, at).replace(/^\[(.*)\]$/, "$1");
    const host = options.hosts?.[named] ?? named;
    const upstream = connect(Number(target.slice(at + 1)), host);
    track(upstream);
    let open = false;
    upstream.once("connect", () => {
      open = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", () => {
      if (open) client.destroy();
      else client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    });
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  });
  server.on("connection", track);

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    address: `127.0.0.1:${port}`,
    asks,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
