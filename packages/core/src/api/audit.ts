import type { MiddlewareHandler } from "hono";
import type { AuditLog } from "../ports";
import type { ApiEnv } from "./env";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Records every admin write that succeeded: who (key id and role), the request, its target,
 * and the version it replaced (`If-Match`) and made (`ETag`). One middleware on every route, so
 * a new admin route is audited without a line of its own; a route is an admin write when its
 * `requirePermission` asks for admin. Bodies are never recorded: a new key is in one.
 * The write already happened when the entry is made: a failed entry is logged, not answered
 * as an error that would tell the caller its change did not happen.
 */
export function auditAdminWrites(audit: AuditLog | undefined): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next();
    if (!audit || c.get("permission") !== "admin" || !WRITES.has(c.req.method)) return;
    if (c.res.status >= 400) return;
    const principal = c.get("principal");
    const before = c.req.header("if-match");
    const after = c.res.headers.get("etag");
    const entry = {
      at: new Date().toISOString(),
      actor: { keyId: principal.id, role: principal.role },
      action: c.req.method,
      target: c.req.path,
      status: c.res.status,
      ...(before ? { before: before.slice(0, 200) } : {}),
      ...(after ? { after } : {}),
      requestId: c.get("requestId"),
    };
    await audit.record(entry).catch((error: unknown) => {
      c.get("log").error("An admin write could not be audited", { ...entry, error });
    });
  };
}
