import { randomUUID } from "node:crypto";
import { fallbackLogger, type Logger } from "@toolbus/core/observability/log";
import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "../common/env";

// A caller's id is echoed only when it is boring: it ends up in logs and response headers.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Echoes a well-formed `x-request-id`, or makes one, so a caller can quote it in a report; and
 * hands the stage's logger to whatever writes a line about the request.
 */
export function requestId(log: Logger = fallbackLogger()): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    c.set("log", log);
    const given = c.req.header("x-request-id");
    const id = given !== undefined && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    c.set("requestId", id);
    c.header("x-request-id", id);
    await next();
  };
}
