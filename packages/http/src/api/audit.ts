import type { AuditLog } from "@toolbus/core/ports";
import {
  type AuditObject,
  type AuditObjectKind,
  MAX_AUDIT_TOUCHED,
} from "@toolbus/wire/model/audit";
import type { MiddlewareHandler } from "hono";
import type { AuditedObject, HttpEnv } from "../common/env";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Longer names and ids are cut: an entry stays small whatever a route hands it. */
const MAX_TEXT = 200;

/**
 * Records every admin write that succeeded: who (key id and role), the request, its target,
 * the object it touched, and the version it replaced (`If-Match`) and made (`ETag`). One
 * middleware on every route, so a new admin route is audited without a line of its own; a route
 * is an admin write when its `requirePermission` asks for admin. The object is what the route
 * set as `audited`, or else one derived from the path. Bodies are never recorded: a new key is
 * in one. The write already happened when the entry is made: a failed entry is logged, not
 * answered as an error that would tell the caller its change did not happen.
 */
export function auditAdminWrites(audit: AuditLog | undefined): MiddlewareHandler<HttpEnv> {
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
      object: bounded(c.get("audited") ?? objectFromPath(c.req.path)),
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

/** The first path segment under /v1 names the collection; the next one, the object. */
const COLLECTIONS = new Map<string, AuditObjectKind>([
  ["keys", "key"],
  ["tools", "tool"],
  ["toolsets", "toolset"],
  ["registered-toolsets", "toolset"],
  // The former name of registered-toolsets, still served.
  ["external-toolsets", "toolset"],
  ["capabilities", "capability"],
  ["subscriptions", "subscription"],
  ["runs", "run"],
]);

/** The object of a route that did not say: `/v1/keys/k1` is key k1, `/v1/keys` is all keys. */
function objectFromPath(path: string): AuditedObject {
  const [, , collection = "", id] = path.split("/");
  const kind = COLLECTIONS.get(collection);
  if (!kind) return { kind: "other", id: path };
  return { kind, id: id || "*" };
}

/** Only the known fields, each cut to length, and at most so many touched ids. */
function bounded(object: AuditedObject): AuditObject {
  const result: AuditObject = { kind: object.kind, id: clip(object.id) };
  if (object.name !== undefined) result.name = clip(object.name);
  if (object.role !== undefined) result.role = clip(object.role);
  if (object.toolset !== undefined) result.toolset = clip(object.toolset);
  if (object.touched) {
    const unique = [...new Set(object.touched)];
    result.touched = unique.slice(0, MAX_AUDIT_TOUCHED).map(clip);
    if (unique.length > MAX_AUDIT_TOUCHED) result.touchedCount = unique.length;
  }
  return result;
}

function clip(text: string): string {
  return text.slice(0, MAX_TEXT);
}
