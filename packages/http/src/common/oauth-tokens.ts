import { createHash } from "node:crypto";
import { roleAtLeast } from "@toolbus/core/app/access";
import { UnavailableError } from "@toolbus/core/errors";
import type { OAuthConfig } from "@toolbus/core/oauth-config";
import type { Principal } from "@toolbus/wire/model/call";
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";

/** Signature algorithms a JWKS can verify: asymmetric only, so no shared secret is ever a key. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** jose's codes for a token that is at fault; any other failure is ours or the issuer's (503). */
const TOKEN_FAULTS = new Set([
  "ERR_JWT_EXPIRED",
  "ERR_JWT_CLAIM_VALIDATION_FAILED",
  "ERR_JWT_INVALID",
  "ERR_JWS_INVALID",
  "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
  "ERR_JWKS_NO_MATCHING_KEY",
  "ERR_JWKS_MULTIPLE_MATCHING_KEYS",
  "ERR_JOSE_ALG_NOT_ALLOWED",
  "ERR_JOSE_NOT_SUPPORTED",
]);

const DISCOVERY_TIMEOUT_MS = 5_000;

/** A token refused: the words go into the 401's `error_description`, never the token. */
class TokenRefused extends Error {
  override name = "TokenRefused";
}

/**
 * What checking a token found: its principal, or why it is refused — `invalid_token` (a 401)
 * or `insufficient_scope` (valid, but its claims map to no role: a 403).
 */
export type TokenCheck =
  | {
      ok: true;
      principal: Principal;
      /** When the token stops being valid, epoch ms: long-lived answers end then. */
      expiresAt: number;
    }
  | { ok: false; error: "invalid_token" | "insufficient_scope"; message: string };

export interface TokenVerifier {
  /** Throws only when the issuer's keys cannot be read (UnavailableError, a 503). */
  verify(token: string): Promise<TokenCheck>;
}

/**
 * Checks JWT access tokens of the configured issuer: signature against its JWKS (fetched once
 * and cached by jose, refetched when a token names a key it has not seen), `iss` exactly,
 * `exp`/`nbf` within the configured leeway, then `aud` (RFC 8707) or, Cognito-style,
 * `client_id`, `token_use` and the required scope. The token is never logged or kept.
 */
export function createTokenVerifier(
  oauth: OAuthConfig,
  rules: { roles: readonly string[] },
): TokenVerifier {
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const jwks = () => {
    keys ??= jwksUrl(oauth).then((url) => createRemoteJWKSet(url));
    // A failed discovery is tried again by the next request, not remembered.
    keys.catch(() => {
      keys = undefined;
    });
    return keys;
  };
  const audience = oauth.audience ?? (oauth.clientIds ? undefined : [oauth.resource]);

  return {
    async verify(token) {
      const keySet = await jwks();
      try {
        const { payload } = await jwtVerify(token, keySet, {
          issuer: oauth.issuer,
          ...(audience ? { audience } : {}),
          algorithms: ALGORITHMS,
          clockTolerance: oauth.clockToleranceSeconds,
          requiredClaims: ["exp", "sub"],
        }).catch((error: unknown) => {
          throw refusal(error);
        });
        checkClientClaims(oauth, payload);
        const role = roleOf(oauth, rules, payload);
        if (role === undefined) {
          return {
            ok: false,
            error: "insufficient_scope",
            message:
              "The access token is valid but grants no Toolbus role: an administrator maps its claims to roles (auth.oauth.roles).",
          };
        }
        const issuer = payload.iss as string;
        const subject = payload.sub as string;
        return {
          ok: true,
          principal: { id: oauthPrincipalId(issuer, subject), role, issuer, subject },
          expiresAt: (payload.exp as number) * 1000,
        };
      } catch (error) {
        if (error instanceof TokenRefused) {
          return { ok: false, error: "invalid_token", message: error.message };
        }
        throw error;
      }
    },
  };
}

/**
 * A person's stable id: a hash of issuer and subject, so the same person is the same principal
 * across tokens, two issuers' subjects never meet, and no API key id (16 hex characters) or
 * the bootstrap admin's can be it.
 */
export function oauthPrincipalId(issuer: string, subject: string): string {
  const hash = createHash("sha256").update(`${issuer}|${subject}`, "utf8").digest("hex");
  return `oauth:${hash.slice(0, 32)}`;
}

function checkClientClaims(oauth: OAuthConfig, payload: JWTPayload): void {
  // Cognito's ID tokens are signed by the same keys; only an access token grants access.
  if (payload.token_use !== undefined && payload.token_use !== "access") {
    throw new TokenRefused("The token is not an access token.");
  }
  if (oauth.clientIds) {
    if (!oauth.audience && payload.token_use !== "access") {
      throw new TokenRefused("The token is not an access token.");
    }
    const clientId = payload.client_id;
    if (typeof clientId !== "string" || !oauth.clientIds.includes(clientId)) {
      throw new TokenRefused(
        "The access token was issued to a client this resource does not accept.",
      );
    }
  }
  if (oauth.requiredScope && !scopesOf(payload).includes(oauth.requiredScope)) {
    throw new TokenRefused(`The access token lacks the ${oauth.requiredScope} scope.`);
  }
}

/** `scope` (RFC 9068, space-separated) or `scp` (a list, or a string, as Entra sends it). */
function scopesOf(payload: JWTPayload): string[] {
  return [...claimValues(payload.scope, true), ...claimValues(payload.scp, true)];
}

/** The highest role any value of the configured claim maps to, else the default. */
function roleOf(
  oauth: OAuthConfig,
  rules: { roles: readonly string[] },
  payload: JWTPayload,
): string | undefined {
  const { claim, map } = oauth.roles;
  const spaced = claim === "scope" || claim === "scp";
  let best: string | undefined;
  for (const value of claimValues(payload[claim], spaced)) {
    // Own properties only: a claim value such as "constructor" must not reach the prototype.
    const role = Object.hasOwn(map, value) ? map[value] : undefined;
    if (role !== undefined && (best === undefined || roleAtLeast(rules, role, best))) best = role;
  }
  return best ?? oauth.roles.default;
}

function claimValues(value: unknown, spaced: boolean): string[] {
  if (typeof value === "string") return spaced ? value.split(" ").filter(Boolean) : [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string");
  return [];
}

function refusal(error: unknown): Error {
  if (error instanceof errors.JOSEError && TOKEN_FAULTS.has(error.code)) {
    return new TokenRefused(
      error.code === "ERR_JWT_EXPIRED"
        ? "The access token has expired."
        : "The access token is not valid for this resource.",
    );
  }
  return new UnavailableError("The authorization server's signing keys cannot be read now.", {
    cause: error,
  });
}

/** The JWKS URL: configured, or from the issuer's discovery document. */
async function jwksUrl(oauth: OAuthConfig): Promise<URL> {
  if (oauth.jwksUri) return new URL(oauth.jwksUri);
  for (const url of discoveryUrls(oauth.issuer)) {
    const metadata = await readMetadata(url);
    // RFC 8414 §3.3: a document naming another issuer is not this issuer's.
    const named = metadata?.jwks_uri;
    if (metadata?.issuer === oauth.issuer && typeof named === "string" && URL.canParse(named)) {
      return new URL(named);
    }
  }
  throw new UnavailableError("The authorization server's metadata names no signing keys.", {
    context: { issuer: oauth.issuer },
  });
}

/** OpenID Connect discovery (issuer + path), then RFC 8414 (well-known before the path). */
function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  return [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
}

async function readMetadata(
  url: string,
): Promise<{ issuer?: unknown; jwks_uri?: unknown } | undefined> {
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json" },
      redirect: "error",
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    return (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  } catch {
    return undefined;
  }
}
