import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { FunctionInstances } from "./instances";

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A loopback endpoint speaking Lambda's Invoke API (RequestResponse) for the functions given:
 * the API's SDK client is pointed here, so its synchronous Invoke of a tool's function runs
 * that function's own instance, and answers as Lambda does (the payload, or the function's
 * error with X-Amz-Function-Error).
 */
export async function startLambdaEndpoint(
  functions: ReadonlyMap<string, FunctionInstances>,
): Promise<{ endpoint: string; invokes: () => number; close(): Promise<void> }> {
  let invokes = 0;
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    const match = INVOKE_PATH.exec(new URL(request.url ?? "/", "http://local").pathname);
    const name = match?.[1] ? decodeURIComponent(match[1]) : undefined;
    const target = name ? functions.get(name) : undefined;
    if (request.method !== "POST" || !target) {
      response.writeHead(404, {
        "content-type": "application/json",
        "x-amzn-errortype": "ResourceNotFoundException",
      });
      response.end(JSON.stringify({ Type: "User", message: `Function not found: ${name}` }));
      return;
    }
    invokes += 1;
    const event = body.length > 0 ? JSON.parse(body.toString("utf8")) : {};
    const result = await target.invoke(event);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-amz-executed-version": "$LATEST",
      "x-amzn-requestid": crypto.randomUUID(),
    };
    if (result.error) {
      headers["x-amz-function-error"] = "Unhandled";
      response.writeHead(200, headers);
      response.end(JSON.stringify(result.error));
      return;
    }
    response.writeHead(200, headers);
    response.end(JSON.stringify(result.value ?? null));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    invokes: () => invokes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
