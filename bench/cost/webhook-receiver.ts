import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver on loopback that answers every delivery 204. */
export async function startReceiver() {
  const counts = { requests: 0, bytes: 0 };
  const server = createServer((request, response) => {
    let bytes = 0;
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on("end", () => {
      counts.requests += 1;
      counts.bytes += bytes;
      response.writeHead(204);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
