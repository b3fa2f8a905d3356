import { validateHostHeader, validateOriginHeader } from "@modelcontextprotocol/server";
import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "../common/env";

/**
 * DNS-rebinding protection: a page on another site whose name an attacker points at this
 * server reaches it with its own `Host` and `Origin`. Both must name one of the hostnames this
 * endpoint answers (port aside); a request without `Origin` (CLI and agent clients send none)
 * is judged by its `Host` alone. Refused before the key is looked at: 403, in JSON-RPC's shape.
 */
export function dnsRebindingGuard(hostnames: readonly string[]): MiddlewareHandler<HttpEnv> {
  const allowed = [...hostnames];
  return async (c, next) => {
    // A request made inside the process (tests, the streaming adapter) has no Host header:
    // its URL names the host it was made for.
    const host = validateHostHeader(c.req.header("host") ?? new URL(c.req.url).host, allowed);
    const verdict = host.ok ? validateOriginHeader(c.req.header("origin"), allowed) : host;
    if (!verdict.ok) {
      return c.json(
        { jsonrpc: "2.0", error: { code: -32000, message: verdict.message }, id: null },
        403,
      );
    }
    await next();
  };
}
