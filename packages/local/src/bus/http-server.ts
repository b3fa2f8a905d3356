import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { answerJsonRequest } from "./protocol";
import type { LocalEventBus } from "./service";

export interface EventBridgeServer {
  /** Give this to the SDK as `endpoint`. */
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

/** Ten full 256 KB entries plus JSON overhead; anything larger is not a valid PutEvents. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Serves a LocalEventBus over HTTP on loopback, for SDK clients in other processes. */
export async function startEventBridgeServer(
  bus: LocalEventBus,
  options: { port?: number; host?: string } = {},
): Promise<EventBridgeServer> {
  const host = options.host ?? "127.0.0.1";
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (body === undefined) {
      response.writeHead(413, { "content-type": "application/x-amz-json-1.1" });
      response.end(
        JSON.stringify({ __type: "ValidationException", message: "Request too large." }),
      );
      return;
    }
    const target = request.headers["x-amz-target"];
    const answer = await answerJsonRequest(bus, Array.isArray(target) ? target[0] : target, body);
    response.writeHead(answer.statusCode, answer.headers);
    response.end(answer.body);
  });
  // Keep-alive sockets would otherwise hold close() open until clients time out.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
