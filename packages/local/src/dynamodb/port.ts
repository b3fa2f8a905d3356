import { createServer } from "node:net";

/**
 * Asks the kernel for a free TCP port. DynamoDB Local rejects `-port 0`, so we cannot let
 * the JVM pick. We probe on the wildcard address because DynamoDB Local binds 0.0.0.0; the
 * port can still be taken between this probe and the JVM's bind, which the launcher handles
 * by retrying with a new port.
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen({ port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : undefined;
      server.close(() => {
        if (port === undefined) reject(new Error("The kernel did not report a port"));
        else resolve(port);
      });
    });
  });
}
