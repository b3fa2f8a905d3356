import * as z from "zod";
import { isKnownRole } from "./app/access";
import type { Issue } from "./errors";

/**
 * An issuer, JWKS or resource URL: https, or http to this machine only (a test or local
 * authorization server). Keys fetched in the clear from elsewhere could be anyone's.
 */
export const secureUrl = z.string().refine(isSecureUrl, {
  message: "expected an https URL (http only for localhost, 127.0.0.1 or [::1])",
});

/** One OAuth scope token (RFC 6749 §3.3): printable ASCII without space, quote or backslash. */
export const scopeToken = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, { message: "expected one scope: no spaces or quotes" })
  .max(200);

/**
 * `auth.oauth`: Toolbus as an OAuth 2.0 resource server (RFC 9728, RFC 8707). Callers sign in
 * with the configured issuer and present its JWT access tokens; API keys keep working beside
 * them. Either the token's `aud` names this resource (`audience`, the standard way), or, for
 * issuers whose access tokens carry no `aud` (Cognito), `client_id` is one of `clientIds`.
 */
export const oauthConfig = z.strictObject({
  /** The authorization server's issuer identifier, compared exactly with a token's `iss`. */
  issuer: secureUrl,
  /** Where its signing keys are; absent, read from its discovery document. */
  jwksUri: secureUrl.optional(),
  /**
   * This resource's identifier: what clients ask tokens for (RFC 8707 `resource`), what the
   * protected-resource metadata names, and where its URL is derived from. Typically the
   * public URL of `/mcp`, e.g. `https://toolbus.example.com/mcp`.
   */
  resource: secureUrl,
  /**
   * The `aud` values a token must carry one of. Default: `[resource]`, unless `clientIds`
   * is set (then `aud` is not checked unless this is given).
   */
  audience: z.array(z.string().min(1).max(2048)).min(1).max(20).optional(),
  /** Accepted `client_id`s, for issuers whose access tokens carry no `aud` (Cognito). */
  clientIds: z.array(z.string().min(1).max(256)).min(1).max(100).optional(),
  /**
   * The console's client at the issuer: public (no secret), authorization code with PKCE
   * (S256), redirect URI `<the API's origin>/console`. Absent, the console signs in with API
   * keys only.
   */
  consoleClientId: z.string().min(1).max(256).optional(),
  /**
   * The issuer's token endpoint, where it is on another origin than the issuer (Cognito: issuer
   * `https://cognito-idp.<region>.amazonaws.com/<pool>`, token endpoint
   * `https://<domain>.auth.<region>.amazoncognito.com/oauth2/token`). The console's page may
   * then send requests to its origin too, and exchanges codes only at this URL. Absent, the
   * token endpoint must be on the issuer's origin. Used only with `consoleClientId`.
   */
  consoleTokenEndpoint: secureUrl.optional(),
  /** A scope every token must hold (in its `scope` claim), e.g. `toolbus/mcp`. */
  requiredScope: scopeToken.optional(),
  /** How claims become a Toolbus role: the highest role any value of `claim` maps to. */
  roles: z.strictObject({
    /** The claim read: `cognito:groups`, `groups`, `scope`, `roles`, … */
    claim: z.string().min(1).max(200),
    /** Claim value → role. `scope` and `scp` are read as space-separated lists. */
    map: z.record(z.string().min(1).max(256), z.string().min(1)).default({}),
    /** The role of a token none of whose values maps; absent, such a token gets a 403. */
    default: z.string().min(1).optional(),
  }),
  /** Scopes the metadata advertises and 401 challenges name (`requiredScope` when absent). */
  scopesSupported: z.array(scopeToken).max(50).optional(),
  /** Leeway for `exp` and `nbf`, seconds. */
  clockToleranceSeconds: z.number().int().min(0).max(300).default(30),
});
export type OAuthConfig = z.infer<typeof oauthConfig>;

/** Roles the mapping names that the stage does not have: a typo must stop the start. */
export function oauthConfigProblems(
  oauth: OAuthConfig | undefined,
  rules: { roles: readonly string[] },
): Issue[] {
  if (!oauth) return [];
  const problems: Issue[] = [];
  const known = `one of roles (${rules.roles.join(", ")})`;
  for (const [value, role] of Object.entries(oauth.roles.map)) {
    if (!isKnownRole(rules, role)) {
      problems.push({
        path: `auth.oauth.roles.map.${value}`,
        message: `"${role}" is not ${known}`,
      });
    }
  }
  // With clientIds, the API accepts only their tokens: the console's would all be refused.
  const client = oauth.consoleClientId;
  if (client && oauth.clientIds && !oauth.clientIds.includes(client)) {
    problems.push({
      path: "auth.oauth.consoleClientId",
      message: `"${client}" is not one of clientIds`,
    });
  }
  const fallback = oauth.roles.default;
  if (fallback !== undefined && !isKnownRole(rules, fallback)) {
    problems.push({ path: "auth.oauth.roles.default", message: `"${fallback}" is not ${known}` });
  }
  return problems;
}

function isSecureUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}
