import type { OAuthConfig } from "@toolbus/core/oauth-config";

/** Where RFC 9728 puts a resource's metadata: the well-known path, then the resource's path. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/**
 * The absolute URL of the protected-resource metadata for the configured resource (RFC 9728
 * §3.1): the well-known segment goes between the host and the resource's path. Derived from
 * configuration, never from the request's Host, which the caller chooses.
 */
export function resourceMetadataUrl(oauth: OAuthConfig): string {
  const resource = new URL(oauth.resource);
  const path = resource.pathname === "/" ? "" : resource.pathname.replace(/\/$/, "");
  return `${resource.origin}${PROTECTED_RESOURCE_PATH}${path}`;
}

/** The scopes a 401 or 403 names: the one every token needs, else those the metadata lists. */
export function challengeScope(oauth: OAuthConfig): string | undefined {
  if (oauth.requiredScope) return oauth.requiredScope;
  return oauth.scopesSupported?.length ? oauth.scopesSupported.join(" ") : undefined;
}

/**
 * `WWW-Authenticate` for a refused request (RFC 6750 §3, RFC 9728 §5.1). Without OAuth it
 * stays the bare `Bearer` it always was; with it, MCP clients find where to sign in from it.
 * `error` is set when a credential was presented and refused (`invalid_token`) or lacks what
 * the request needs (`insufficient_scope`). Nothing of the presented token is echoed.
 */
export function bearerChallenge(
  oauth: OAuthConfig | undefined,
  error?: { code: "invalid_token" | "insufficient_scope"; description: string },
): string {
  if (!oauth) return "Bearer";
  const params: string[] = [];
  if (error) {
    params.push(`error="${error.code}"`, `error_description="${quoted(error.description)}"`);
  }
  params.push(`resource_metadata="${quoted(resourceMetadataUrl(oauth))}"`);
  const scope = challengeScope(oauth);
  if (scope) params.push(`scope="${quoted(scope)}"`);
  return `Bearer ${params.join(", ")}`;
}

/** A quoted-string's content: our own fixed texts and configured URLs, escaped all the same. */
function quoted(text: string): string {
  return text.replace(/[\\"]/g, (char) => `\\${char}`);
}
