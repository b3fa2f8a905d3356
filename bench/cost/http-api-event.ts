import { randomUUID } from "node:crypto";

/** An API Gateway HTTP API (payload 2.0) event, as the stack's `$default` route sends it. */
export function httpApiEvent(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const now = new Date();
  const all = {
    host: "api.toolbus.example",
    "user-agent": "cost-harness",
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-proto": "https",
    "x-forwarded-port": "443",
    ...(body ? { "content-length": String(Buffer.byteLength(body)) } : {}),
    ...headers,
  };
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: path,
    rawQueryString: "",
    headers: all,
    requestContext: {
      accountId: "000000000000",
      apiId: "costharness",
      domainName: all.host,
      domainPrefix: "api",
      http: {
        method,
        path,
        protocol: "HTTP/1.1",
        sourceIp: "203.0.113.7",
        userAgent: all["user-agent"],
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body ? { body, isBase64Encoded: false } : { isBase64Encoded: false }),
  };
}
