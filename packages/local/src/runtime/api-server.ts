import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** Serves a fetch-style app (the Hono API) on loopback, as API Gateway does on AWS. */
export function serveApi(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: { port: number; host?: string },
): Promise<ApiServer> {
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: host }, (info) => {
      const { port } = info as AddressInfo;
      resolve({
        url: `http://${reachableHost(host)}:${port}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            if ("closeAllConnections" in server) server.closeAllConnections();
          }),
      });
    });
    server.once("error", reject);
  });
}

/** A URL's host for a listening address: "every address" is reached on loopback. */
function reachableHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}
