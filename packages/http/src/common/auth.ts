import { createHash, timingSafeEqual } from "node:crypto";
import {
  hasPermission,
  highestRole,
  type Permission,
  requiredRole,
} from "@toolbus/core/app/access";
import type { StageConfig } from "@toolbus/core/config";
import { ForbiddenError, UnauthorizedError } from "@toolbus/core/errors";
import type { KeyStore } from "@toolbus/core/ports";
import type { MiddlewareHandler } from "hono";
import type { HttpEnv } from "./env";

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
/** The bootstrap admin's principal id, as it appears in call records and events. */
export const ADMIN_BOOTSTRAP_ID = "admin-bootstrap";

/** What checking a key needs: the stored keys, and the bootstrap admin key if the stage has one. */
export interface AuthDeps {
  config: StageConfig;
  keys: KeyStore;
  adminKey?: string | (() => string | undefined);
}

/**
 * Authenticates `Authorization: Bearer <key>` against the configured bootstrap admin key and
 * the key store. Keys are never logged or echoed; every failure reads the same, so a caller
 * cannot tell an unknown key from a revoked one.
 */
export function authenticate(deps: AuthDeps): MiddlewareHandler<HttpEnv> {
  const adminKey = deps.adminKey;
  // The digest of the key last seen: a key read at use is hashed once, not per request.
  let digested: { key: string; digest: Buffer } | undefined;
  const adminDigest = () => {
    const key = typeof adminKey === "function" ? adminKey() : adminKey;
    if (!key) return undefined;
    if (digested?.key !== key) digested = { key, digest: digest(key) };
    return digested.digest;
  };
  const bootstrapRole = highestRole(deps.config);

  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header === undefined || header === "") {
      throw new UnauthorizedError("An API key is required: Authorization: Bearer <key>.");
    }
    const key = BEARER.exec(header)?.[1];
    if (key === undefined) {
      throw new UnauthorizedError("The Authorization header must be: Bearer <key>.");
    }
    // Compared as digests so both sides have the same length and the comparison takes the
    // same time whatever the key.
    const admin = adminDigest();
    if (admin && timingSafeEqual(digest(key), admin)) {
      c.set("principal", { id: ADMIN_BOOTSTRAP_ID, role: bootstrapRole });
      // The configured key lives as long as the configuration.
      c.set("keyStillValid", async () => true);
    } else {
      const record = await deps.keys.verify(key);
      if (!record) throw new UnauthorizedError("The API key is not valid.");
      c.set("principal", { id: record.keyId, role: record.role });
      c.set("keyStillValid", async () => (await deps.keys.verify(key)) !== undefined);
    }
    // Answers to authenticated requests are for this caller only.
    c.header("Cache-Control", "no-store");
    await next();
  };
}

/** Which permission each `requirePermission` middleware checks: what OpenAPI says per route. */
const permissions = new WeakMap<object, Permission>();

/** The permission a route's middleware requires, if one of them is `requirePermission`'s. */
export function permissionOf(middleware: unknown): Permission | undefined {
  const list = Array.isArray(middleware) ? middleware : [middleware];
  for (const handler of list) {
    const permission = typeof handler === "function" ? permissions.get(handler) : undefined;
    if (permission) return permission;
  }
  return undefined;
}

/** 403 unless the principal holds `permission` (app/access.ts decides; this only answers). */
export function requirePermission(
  config: StageConfig,
  permission: Permission,
): MiddlewareHandler<HttpEnv> {
  const required = requiredRole(config, permission);
  const middleware: MiddlewareHandler<HttpEnv> = async (c, next) => {
    const principal = c.get("principal");
    if (!principal || !hasPermission(config, principal, permission)) {
      throw new ForbiddenError(`This needs the ${required} role or higher.`, {
        details: { requiredRole: required },
      });
    }
    c.set("permission", permission);
    await next();
  };
  permissions.set(middleware, permission);
  return middleware;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
