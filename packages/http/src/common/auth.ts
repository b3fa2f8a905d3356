import { createHash, timingSafeEqual } from "node:crypto";
import {
  hasPermission,
  highestRole,
  type Permission,
  requiredRole,
} from "@toolbus/core/app/access";
import type { StageConfig } from "@toolbus/core/config";
import { ForbiddenError, UnauthorizedError, ValidationError } from "@toolbus/core/errors";
import type { OAuthConfig } from "@toolbus/core/oauth-config";
import type { KeyStore } from "@toolbus/core/ports";
import type { Context, MiddlewareHandler } from "hono";
import { bearerChallenge } from "./challenge";
import type { HttpEnv } from "./env";
import type { TokenVerifier } from "./oauth-tokens";
import { endUserPrincipal, ON_BEHALF_OF_HEADER, ON_BEHALF_OF_ROLE_HEADER } from "./on-behalf-of";

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
/** A JWS in compact form: three base64url parts. Toolbus keys (`tbk_…`) never have a dot. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** The bootstrap admin's principal id, as it appears in call records and events. */
export const ADMIN_BOOTSTRAP_ID = "admin-bootstrap";

/** What checking a key needs: the stored keys, and the bootstrap admin key if the stage has one. */
export interface AuthDeps {
  config: StageConfig;
  keys: KeyStore;
  adminKey?: string | (() => string | undefined);
}

/** 403 `insufficient_scope`: a signed-in person whose token maps to no role (RFC 6750 §3.1). */
export class InsufficientScopeError extends ForbiddenError {
  override readonly code = "insufficient_scope";
}

/**
 * Authenticates `Authorization: Bearer <credential>`: the configured bootstrap admin key, a
 * stored API key, or (when the stage has `auth.oauth`) a JWT access token of its issuer. Keys
 * and tokens are never logged, echoed, stored or passed on; every failure of a key reads the
 * same, so a caller cannot tell an unknown key from a revoked one. A refusal's
 * `WWW-Authenticate` points an OAuth client at the protected-resource metadata.
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
  const oauth = deps.config.auth?.oauth;
  // Loaded with the first token, as jose is: a stage of API keys alone never carries it.
  let verifier: Promise<TokenVerifier> | undefined;
  const tokens = () => {
    verifier ??= import("./oauth-tokens").then(({ createTokenVerifier }) =>
      createTokenVerifier(oauth as NonNullable<typeof oauth>, deps.config),
    );
    return verifier;
  };
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header === undefined || header === "") {
      refuse(
        c,
        oauth,
        oauth
          ? "Sign in, or send an API key: Authorization: Bearer <token or key>."
          : "An API key is required: Authorization: Bearer <key>.",
        false,
      );
    }
    const key = BEARER.exec(header)?.[1];
    if (key === undefined) {
      refuse(c, oauth, "The Authorization header must be: Bearer <key>.", false);
    }
    const onBehalfOf = c.req.header(ON_BEHALF_OF_HEADER);
    const onBehalfOfRole = c.req.header(ON_BEHALF_OF_ROLE_HEADER);
    // Compared as digests so both sides have the same length and the comparison takes the
    // same time whatever the key.
    const admin = adminDigest();
    if (admin && timingSafeEqual(digest(key), admin)) {
      // Not a key created with actsFor: naming an end user is refused.
      if (onBehalfOf !== undefined) endUserPrincipal(deps.config, undefined, onBehalfOf, undefined);
      c.set("principal", { id: ADMIN_BOOTSTRAP_ID, role: bootstrapRole });
      // The configured key lives as long as the configuration.
      c.set("keyStillValid", async () => true);
    } else if (oauth && JWT_SHAPE.test(key)) {
      const check = await (await tokens()).verify(key);
      if (!check.ok) {
        const error = { code: check.error, description: check.message };
        if (check.error === "invalid_token") refuse(c, oauth, check.message, true);
        c.set("authChallenge", bearerChallenge(oauth, error));
        throw new InsufficientScopeError(check.message);
      }
      if (onBehalfOf !== undefined) endUserPrincipal(deps.config, undefined, onBehalfOf, undefined);
      c.set("principal", check.principal);
      // A token is as good as its expiry: an event stream opened with it ends then.
      c.set("keyStillValid", async () => Date.now() < check.expiresAt);
    } else {
      const record = await deps.keys.verify(key);
      if (!record) refuse(c, oauth, "The API key is not valid.", true);
      c.set(
        "principal",
        onBehalfOf === undefined
          ? { id: record.keyId, role: record.role }
          : endUserPrincipal(deps.config, record, onBehalfOf, onBehalfOfRole),
      );
      c.set("keyStillValid", async () => (await deps.keys.verify(key)) !== undefined);
      // The key's own record; a request acting for an end user is that user's, not the key's.
      if (onBehalfOf === undefined) c.set("apiKey", record);
    }
    if (onBehalfOf === undefined && onBehalfOfRole !== undefined) {
      throw new ValidationError("X-Toolbus-On-Behalf-Of-Role needs X-Toolbus-On-Behalf-Of.");
    }
    // Answers to authenticated requests are for this caller only.
    c.header("Cache-Control", "no-store");
    await next();
  };
}

/**
 * A 401 whose challenge says whether a credential was presented and refused (`invalid_token`)
 * or none was sent; with OAuth configured it names the protected-resource metadata.
 */
function refuse(
  c: Context<HttpEnv>,
  oauth: OAuthConfig | undefined,
  message: string,
  presented: boolean,
): never {
  const error = presented ? { code: "invalid_token" as const, description: message } : undefined;
  c.set("authChallenge", bearerChallenge(oauth, error));
  throw new UnauthorizedError(message);
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
      // A signed-in person's client learns it needs a token with more (RFC 6750 §3.1).
      const oauth = config.auth?.oauth;
      if (oauth && principal?.issuer !== undefined) {
        c.set(
          "authChallenge",
          bearerChallenge(oauth, {
            code: "insufficient_scope",
            description: `This needs the ${required} role or higher.`,
          }),
        );
      }
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
