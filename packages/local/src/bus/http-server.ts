import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { EventBridgeApiError } from "./errors";
import { answerJsonRequest, errorReply, type ProtocolResponse } from "./protocol";
import type { LocalEventBus } from "./service";
import { generateLocalCredentials, type LocalCredentials, verifySignature } from "./sigv4";

export interface EventBridgeServer {
  /** Give this to the SDK as `endpoint`. */
  endpoint: string;
  port: number;
  /** The only credentials this server accepts: requests must be SigV4-signed with them. */
  credentials: LocalCredentials;
  close(): Promise<void>;
}

/** Ten full 256 KB entries plus JSON overhead; anything larger is not a valid PutEvents. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Serves a LocalEventBus over HTTP on loopback, for SDK clients in other processes. Every
 * request must be signed (SigV4, as the SDK always signs) with the credentials the server was
 * given or made: any process on the machine can reach a loopback port, and only Toolbus and
 * whoever it handed the credentials to may publish as Toolbus.
 */
export async function startEventBridgeServer(
  bus: LocalEventBus,
  options: { port?: number; host?: string; credentials?: LocalCredentials } = {},
): Promise<EventBridgeServer> {
  const host = options.host ?? "127.0.0.1";
  const credentials = options.credentials ?? generateLocalCredentials();
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const answer =
      body === undefined
        ? errorReply(new EventBridgeApiError("ValidationException", "Request too large.", 413))
        : await signedOnly(request, body, credentials, () => {
            const target = request.headers["x-amz-target"];
            return answerJsonRequest(bus, Array.isArray(target) ? target[0] : target, body);
          });
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
    credentials,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function signedOnly(
  request: IncomingMessage,
  body: string,
  credentials: LocalCredentials,
  answer: () => Promise<ProtocolResponse>,
): Promise<ProtocolResponse> {
  try {
    await verifySignature(
      { method: request.method ?? "POST", url: request.url ?? "/", headers: request.headers, body },
      credentials,
    );
  } catch (error) {
    if (error instanceof EventBridgeApiError) return errorReply(error);
    throw error;
  }
  return answer();
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
