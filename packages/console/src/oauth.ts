/**
 * Signing in to the console with the stage's OAuth issuer: the authorization code flow with
 * PKCE (S256), run in the browser as a public client (no secret). The issuer is the one the
 * stage's protected-resource metadata names (RFC 9728); the client id the console is registered
 * under there is the stage's `auth.oauth.consoleClientId`, served at `/console/settings`;
 * the redirect URI is the console's own URL. The state and the verifier wait in this tab's
 * session storage while the person is at the issuer; the code comes back to `/console` and is
 * exchanged at the token endpoint with `fetch`. The access token is then the bearer credential
 * exactly as an API key is. The token endpoint is on the issuer's origin, or where the stage
 * names another (`auth.oauth.consoleTokenEndpoint`, Cognito's case), at that URL exactly: the
 * page's policy lets it send requests to those origins only.
 */
import { type PendingSignIn, storePendingSignIn, takePendingSignIn } from "./session";

/** What the sign-in page offers when the stage's console may sign in with its issuer. */
export interface OAuthSignIn {
  issuer: string;
  /** How the button names the issuer: its host, and its path when it has one. */
  name: string;
  clientId: string;
  /** The resource to ask a token for (RFC 8707), as the stage's metadata names it. */
  resource?: string;
  scopes: string[];
  /** The token endpoint the stage names, where it is not on the issuer's origin. */
  tokenEndpoint?: string;
}

/** What a return from the issuer came to: a token to sign in with, or why there is none. */
export type OAuthReturn = { token: string; returnTo?: string } | { problem: string };

interface ProtectedResourceMetadata {
  resource?: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
}

interface IssuerMetadata {
  issuer?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  code_challenge_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
}

let discovered: Promise<OAuthSignIn | undefined> | undefined;

/**
 * The issuer sign-in this stage's console offers, or undefined where it signs in with keys
 * only. Asked once per page load; a failure to ask leaves key sign-in as the only way in.
 */
export function discoverOAuthSignIn(): Promise<OAuthSignIn | undefined> {
  discovered ??= discover().catch(() => undefined);
  return discovered;
}

async function discover(): Promise<OAuthSignIn | undefined> {
  const settings = await ownJson<{
    oauth?: { clientId?: string; issuer?: string; tokenEndpoint?: string };
  }>("/console/settings");
  const client = settings?.oauth;
  if (!client?.clientId) return undefined;
  const metadata = await ownJson<ProtectedResourceMetadata>(
    "/.well-known/oauth-protected-resource",
  );
  const issuer = metadata?.authorization_servers?.[0];
  if (!issuer || (client.issuer !== undefined && client.issuer !== issuer)) return undefined;
  return {
    issuer,
    name: issuerName(issuer),
    clientId: client.clientId,
    ...(metadata.resource ? { resource: metadata.resource } : {}),
    scopes: metadata.scopes_supported ?? [],
    ...(client.tokenEndpoint ? { tokenEndpoint: client.tokenEndpoint } : {}),
  };
}

/**
 * Sends the person to the issuer to sign in, having kept what the return needs in this tab.
 * Resolves only when it could not (the promise rejects with words for the person).
 */
export async function beginOAuthSignIn(option: OAuthSignIn, returnTo?: string): Promise<void> {
  const metadata = await issuerMetadata(option.issuer);
  const authorize = webUrl(metadata.authorization_endpoint, "authorization endpoint");
  const token = webUrl(metadata.token_endpoint, "token endpoint");
  if (token.origin !== new URL(option.issuer).origin && token.href !== option.tokenEndpoint) {
    // The page's policy lets it reach the issuer's origin, and the token endpoint the stage names.
    throw new Error(
      option.tokenEndpoint
        ? `The issuer's token endpoint (${token.href}) is not the one this stage names (${option.tokenEndpoint}).`
        : `The issuer's token endpoint (${token.origin}) is not on the issuer's origin, which is the only one this console may send a request to. The stage may name it (auth.oauth.consoleTokenEndpoint).`,
    );
  }
  const methods = metadata.code_challenge_methods_supported;
  if (methods && !methods.includes("S256")) {
    throw new Error("The issuer does not support PKCE with S256, which this console requires.");
  }
  const verifier = randomText(32);
  const state = randomText(16);
  const redirectUri = `${location.origin}${location.pathname}`;
  const pending: PendingSignIn = {
    state,
    verifier,
    issuer: option.issuer,
    tokenEndpoint: token.href,
    clientId: option.clientId,
    redirectUri,
    ...(metadata.authorization_response_iss_parameter_supported === true
      ? { issRequired: true }
      : {}),
    ...(option.resource ? { resource: option.resource } : {}),
    ...(returnTo ? { returnTo } : {}),
  };
  const params = new URLSearchParams({
    response_type: "code",
    client_id: option.clientId,
    redirect_uri: redirectUri,
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: "S256",
  });
  if (option.scopes.length > 0) params.set("scope", option.scopes.join(" "));
  if (option.resource) params.set("resource", option.resource);
  for (const [name, value] of params) authorize.searchParams.set(name, value);
  storePendingSignIn(pending);
  location.assign(authorize.href);
}

/**
 * The return from the issuer, when this load of the console is one: the query is taken off the
 * address bar at once (a code is not left in the history), the state compared with the one this
 * tab kept, and the code exchanged for a token. Undefined when the URL carries no return.
 */
export async function finishOAuthSignIn(): Promise<OAuthReturn | undefined> {
  const params = new URLSearchParams(location.search);
  if (!params.has("code") && !params.has("error") && !params.has("state")) return undefined;
  history.replaceState(null, "", `${location.pathname}${location.hash}`);
  const pending = takePendingSignIn();
  if (!pending) {
    return {
      problem:
        "This sign-in was not started in this tab, or it was already finished. Nothing was signed in: start again.",
    };
  }
  if (params.get("state") !== pending.state) {
    return {
      problem:
        "The issuer's answer does not belong to the sign-in this tab started (its state differs), so it was refused. Start again.",
    };
  }
  const error = params.get("error");
  if (error) {
    return {
      problem:
        error === "access_denied"
          ? "The sign-in was declined at the issuer: Toolbus was not given access. Nothing was signed in."
          : `The issuer refused the sign-in (${error}${describe(params.get("error_description"))}).`,
    };
  }
  const iss = params.get("iss");
  if (iss === null && pending.issRequired) {
    // RFC 9207: an issuer that names itself in every answer gave this one no name.
    return {
      problem:
        "The answer does not name the issuer, which this issuer always does, so it was refused. Start again.",
    };
  }
  if (iss !== null && iss !== pending.issuer) {
    // RFC 9207: an answer naming another issuer is not from the one this tab went to.
    return { problem: `The answer came from another issuer (${iss}), so it was refused.` };
  }
  const code = params.get("code");
  if (!code) return { problem: "The issuer's answer carries no code. Start again." };
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code,
    redirect_uri: pending.redirectUri,
    client_id: pending.clientId,
    code_verifier: pending.verifier,
  });
  if (pending.resource) body.set("resource", pending.resource);
  let answer: {
    access_token?: string;
    token_type?: string;
    error?: string;
    error_description?: string;
  };
  let status: number;
  try {
    const response = await fetch(pending.tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
      credentials: "omit",
      cache: "no-store",
    });
    status = response.status;
    answer = (await response.json().catch(() => ({}))) as typeof answer;
  } catch (error) {
    return {
      problem: `The issuer's token endpoint could not be reached: ${(error as Error).message}`,
    };
  }
  if (!answer.access_token) {
    const why = answer.error
      ? `${answer.error}${describe(answer.error_description)}`
      : `it answered ${status}`;
    return { problem: `The issuer gave no token for the code (${why}). Start again.` };
  }
  if (answer.token_type && answer.token_type.toLowerCase() !== "bearer") {
    return {
      problem: `The issuer gave a ${answer.token_type} token; the API takes bearer tokens.`,
    };
  }
  return {
    token: answer.access_token,
    ...(pending.returnTo ? { returnTo: pending.returnTo } : {}),
  };
}

/** OpenID Connect discovery first (issuer + path), then RFC 8414 (well-known before the path). */
async function issuerMetadata(issuer: string): Promise<IssuerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, "");
  const candidates = [
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  for (const candidate of candidates) {
    let response: Response;
    try {
      response = await fetch(candidate, {
        credentials: "omit",
        headers: { accept: "application/json" },
      });
    } catch {
      continue;
    }
    if (!response.ok) continue;
    const metadata = (await response.json()) as IssuerMetadata;
    if (metadata.issuer !== issuer) {
      throw new Error(`The issuer's metadata names another issuer (${metadata.issuer}).`);
    }
    return metadata;
  }
  throw new Error(
    `The issuer ${issuer} could not be reached to sign in. Try again, or use an API key.`,
  );
}

/** A JSON answer of this origin; undefined for a 404 (the stage has no such thing). */
async function ownJson<T>(path: string): Promise<T | undefined> {
  const response = await fetch(path, {
    credentials: "omit",
    cache: "no-store",
    headers: { accept: "application/json" },
  });
  if (!response.ok) return undefined;
  return (await response.json()) as T;
}

function webUrl(value: string | undefined, what: string): URL {
  let url: URL | undefined;
  try {
    url = value ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new Error(`The issuer's metadata has no usable ${what}.`);
  }
  return url;
}

function issuerName(issuer: string): string {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, "");
  return `${url.host}${path}`;
}

function describe(text: string | null | undefined): string {
  return text ? `: ${text}` : "";
}

/** `bytes` random bytes as base64url: a PKCE verifier of 43 characters for 32. */
function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
