import { ToolbusError } from "@toolbus/core/errors";
import { fallbackLogger } from "@toolbus/core/observability/log";
import type { Context } from "hono";
import type { HttpEnv } from "./env";

/**
 * Server-side record of a failure, for the REST error handler and for MCP, which answers the
 * caller in JSON-RPC's words but logs the same way. Headers are never logged: they carry API keys.
 */
export function logFailure(c: Context<HttpEnv>, error: unknown): void {
  const detail =
    error instanceof Error
      ? {
          name: error.name,
          message: error.message,
          stack: error.stack,
          ...(error instanceof ToolbusError ? { context: error.context } : {}),
        }
      : { value: String(error) };
  (c.get("log") ?? fallbackLogger()).error("request failed", {
    requestId: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    error: detail,
  });
}
