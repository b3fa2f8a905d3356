import { createHash, randomBytes } from "node:crypto";
import type { HttpClient, SecretSource } from "../outbound/types";
import type { Provider } from "./config";

/** What a provider's token endpoint granted. */
export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires, ms since the epoch; absent when the provider does not say. */
  expiresAt?: number;
  /** The scopes granted, when the provider says (else those asked for). */
  scopes?: string[];
}

/**
 * Why a token request did not give tokens. `invalid_grant`: the grant (code or refresh token)
 * is dead, the person must connect again. `refused`: the provider refused the client (its id,
 * secret or the request): a stage configuration problem. `unreachable`: a network failure,
 * a timeout or a 5xx — worth a retry, never a reason to drop the connection.
 */
export class TokenError extends Error {
  override name = "TokenError";
  constructor(
    readonly reason: "invalid_grant" | "refused" | "unreachable",
    message: string,
  ) {
    super(message);
  }
}

/** A random value as base64url: states, verifiers, tickets. */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString("base64url");

/** PKCE S256 (RFC 7636): the challenge for a verifier. */
export const pkceChallenge = (verifier: string) =>
  createHash("sha256").update(verifier).digest("base64url");

/** The authorization request a person's browser is sent to. */
export function authorizationUrl(
  provider: Provider,
  request: { redirectUri: string; state: string; verifier: string; scopes: readonly string[] },
): string {
  const url = new URL(provider.authorizeUrl);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.clientId);
  url.searchParams.set("redirect_uri", request.redirectUri);
  url.searchParams.set("state", request.state);
  url.searchParams.set("code_challenge", pkceChallenge(request.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (request.scopes.length > 0) url.searchParams.set("scope", request.scopes.join(" "));
  return url.toString();
}

/** The OAuth client of one provider: code exchange, refresh and revocation. */
export class OAuthClient {
  constructor(
    private readonly provider: Provider,
    private readonly http: HttpClient,
    private readonly secret: SecretSource,
  ) {}

  exchangeCode(code: string, verifier: string, redirectUri: string): Promise<TokenSet> {
    return this.#token({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    });
  }

  refresh(refreshToken: string): Promise<TokenSet> {
    return this.#token({ grant_type: "refresh_token", refresh_token: refreshToken });
  }

  /** RFC 7009; whether the provider took it. Without a revocation endpoint, false. */
  async revoke(token: string, hint: "refresh_token" | "access_token"): Promise<boolean> {
    if (!this.provider.revokeUrl) return false;
    try {
      const response = await this.http.request(this.provider.revokeUrl, {
        method: "POST",
        ...this.#request({ token, token_type_hint: hint }),
        retries: 1,
      });
      return response.status === 200;
    } catch {
      return false;
    }
  }

  async #token(form: Record<string, string>): Promise<TokenSet> {
    let response: Awaited<ReturnType<HttpClient["request"]>>;
    try {
      // A refresh token is single-use at providers that rotate them: never retried blindly.
      response = await this.http.request(this.provider.tokenUrl, {
        method: "POST",
        ...this.#request(form),
        retries: 0,
        maxBytes: 64 * 1024,
      });
    } catch (error) {
      throw new TokenError(
        "unreachable",
        `${this.provider.name}'s token endpoint did not answer (${(error as Error).message}).`,
      );
    }
    const body = parseBody(response.text());
    if (response.status >= 500 || response.status === 429) {
      throw new TokenError(
        "unreachable",
        `${this.provider.name}'s token endpoint answered ${response.status}.`,
      );
    }
    const error = typeof body.error === "string" ? body.error : undefined;
    if (response.status !== 200 || error) {
      // GitHub answers an expired code or refresh token with 200 and bad_verification_code / bad_refresh_token.
      const dead =
        error === "invalid_grant" ||
        error === "bad_refresh_token" ||
        error === "bad_verification_code";
      throw new TokenError(
        dead ? "invalid_grant" : "refused",
        `${this.provider.name} refused the token request (${error ?? response.status}).`,
      );
    }
    if (typeof body.access_token !== "string" || body.access_token === "") {
      throw new TokenError("refused", `${this.provider.name} answered without an access token.`);
    }
    const expiresIn = Number(body.expires_in);
    return {
      accessToken: body.access_token,
      ...(typeof body.refresh_token === "string" && body.refresh_token
        ? { refreshToken: body.refresh_token }
        : {}),
      ...(Number.isFinite(expiresIn) && expiresIn > 0
        ? { expiresAt: Date.now() + expiresIn * 1000 }
        : {}),
      ...(typeof body.scope === "string"
        ? { scopes: body.scope.split(/[ ,]+/).filter(Boolean) }
        : {}),
    };
  }

  /** Headers and form body, the client authenticated as the provider asks. */
  #request(form: Record<string, string>): { headers: Record<string, string>; body: string } {
    const params = new URLSearchParams(form);
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    const secret = this.provider.clientSecret ? this.secret(this.provider.clientSecret) : undefined;
    if (this.provider.clientAuth === "basic" && secret) {
      // RFC 6749 §2.3.1: both parts form-encoded before joining.
      const user = encodeURIComponent(this.provider.clientId);
      headers.authorization = `Basic ${Buffer.from(`${user}:${encodeURIComponent(secret)}`).toString("base64")}`;
    } else {
      params.set("client_id", this.provider.clientId);
      if (secret) params.set("client_secret", secret);
    }
    return { headers, body: params.toString() };
  }
}

function parseBody(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // GitHub without Accept: application/json answers a form.
    return Object.fromEntries(new URLSearchParams(text));
  }
  return {};
}
