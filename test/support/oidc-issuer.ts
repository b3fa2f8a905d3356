import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider, { type Configuration } from "oidc-provider";
import { Browser } from "./browser";
import { closableOnLoopback, type Loopback } from "./loopback";

/** The public client MCP clients are registered as (PKCE, no secret), loopback redirect. */
export const MCP_CLIENT_ID = "mcp-client";
export const REDIRECT_URI = "http://127.0.0.1/callback";
/** The scope the authorization server grants for Toolbus. */
export const TOOLBUS_SCOPE = "toolbus";

/**
 * oidc-provider (panva) on loopback: a real OAuth 2.0 / OpenID Connect authorization server
 * issuing JWT access tokens for a resource named by RFC 8707 `resource` (its `aud`), with a
 * `groups` claim per account. People sign in through its own login and consent pages.
 */
export interface OidcIssuer {
  issuer: string;
  /** Signs `login` in through the pages, as a browser would, and returns the access token. */
  signIn(login: string, options?: { resource?: string }): Promise<string>;
  /** How long the next access tokens live, seconds (default 300). */
  setAccessTokenTtl(seconds: number): void;
  close(): Promise<void>;
}

export async function startOidcIssuer(options: {
  /** The resource tokens are for when a request names none. */
  resource: string;
  /** Account id → its `groups` claim. */
  groups: Record<string, string[]>;
}): Promise<OidcIssuer> {
  const http = createServer();
  http.listen(0, "127.0.0.1");
  const loopback = await closableOnLoopback(http, "");
  const issuer = `http://127.0.0.1:${loopback.port}`;
  let accessTokenTtl = 300;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: MCP_CLIENT_ID,
        application_type: "native",
        token_endpoint_auth_method: "none",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    ...providerKeys(),
    scopes: ["openid", "offline_access", TOOLBUS_SCOPE],
    pkce: { required: () => true },
    // Set, so the provider does not announce its defaults on every first use.
    ttl: {
      AccessToken: () => accessTokenTtl,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 300,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    extraTokenClaims: async (_ctx, token) => {
      const accountId = "accountId" in token ? token.accountId : undefined;
      return accountId ? { groups: options.groups[accountId] ?? [] } : undefined;
    },
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: TOOLBUS_SCOPE,
          audience: resourceIndicator,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  http.on("request", provider.callback());

  return {
    issuer,
    signIn: (login, signInOptions = {}) =>
      signInThroughPages(issuer, login, signInOptions.resource ?? options.resource),
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    close: () => loopback.close(),
  };
}

/** A fresh RS256 signing key and cookie key for an oidc-provider on loopback. */
export function providerKeys(): Pick<Configuration, "jwks" | "cookies"> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    jwks: {
      keys: [{ ...privateKey.export({ format: "jwk" }), kid: "rs-1", alg: "RS256", use: "sig" }],
    },
    cookies: { keys: [randomBytes(16).toString("hex")] },
  };
}

/** The authorization code flow with PKCE through the pages; the code exchanged for a token. */
async function signInThroughPages(issuer: string, login: string, resource: string) {
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL("/auth", issuer);
  authorize.search = new URLSearchParams({
    client_id: MCP_CLIENT_ID,
    response_type: "code",
    redirect_uri: REDIRECT_URI,
    scope: `openid ${TOOLBUS_SCOPE}`,
    resource,
    state: randomBytes(8).toString("hex"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  const code = await authorizeThroughPages(authorize.toString(), login);

  const response = await fetch(new URL("/token", issuer), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: MCP_CLIENT_ID,
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      resource,
    }),
  });
  const body = (await response.json()) as { access_token?: string; error?: string };
  if (!response.ok || !body.access_token) {
    throw new Error(`the token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

/**
 * From an authorization request's URL to the code it ends with: a new `Browser` follows the
 * server's redirects and submits its login (as `login`) and consent forms.
 */
export async function authorizeThroughPages(start: string, login: string): Promise<string> {
  const page = await new Browser().authorize(start, login, {
    stopAt: (url) => url.href.startsWith(REDIRECT_URI),
  });
  if (!page.stopped) throw new Error(`${page.url} answered ${page.status}: ${page.body}`);
  const code = new URL(page.url).searchParams.get("code");
  if (!code) throw new Error(`the sign-in ended without a code: ${new URL(page.url).search}`);
  return code;
}

/**
 * An issuer shaped like an Amazon Cognito user pool, on loopback: discovery and JWKS under
 * `/<pool id>` as Cognito serves them, and access tokens as Cognito mints them — no `aud`,
 * `client_id`, `scope`, `token_use: "access"`, `cognito:groups`. oidc-provider cannot issue
 * a JWT access token without `aud`, so these are signed here (RS256, node:crypto); the keys
 * are served from a real JWKS endpoint that Toolbus fetches.
 */
export interface CognitoShapedIssuer {
  issuer: string;
  /** A token with the given claims over Cognito's; `signWith: "stranger"` uses a key not in the JWKS. */
  mint(
    claims: Record<string, unknown> & { sub: string },
    options?: { signWith?: "pool" | "stranger"; expiresInSeconds?: number },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startCognitoShapedIssuer(): Promise<CognitoShapedIssuer> {
  const pool = "us-east-1_ToolbusTest";
  const signing = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = "cognito-1";
  let issuer = "";
  const loopback: Loopback = await closableOnLoopback(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.url === `/${pool}/.well-known/openid-configuration`) {
        return json(200, {
          issuer,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          authorization_endpoint: `${issuer}/oauth2/authorize`,
          token_endpoint: `${issuer}/oauth2/token`,
        });
      }
      if (req.url === `/${pool}/.well-known/jwks.json`) {
        const jwk = signing.publicKey.export({ format: "jwk" });
        return json(200, { keys: [{ ...jwk, kid, alg: "RS256", use: "sig" }] });
      }
      json(404, { message: "not found" });
    }).listen(0, "127.0.0.1"),
    "",
  );
  issuer = `http://127.0.0.1:${loopback.port}/${pool}`;

  return {
    issuer,
    mint(claims, options = {}) {
      const key: KeyObject =
        options.signWith === "stranger" ? stranger.privateKey : signing.privateKey;
      const now = Math.floor(Date.now() / 1000);
      const payload = {
        iss: issuer,
        token_use: "access",
        auth_time: now,
        iat: now,
        exp: now + (options.expiresInSeconds ?? 3600),
        jti: randomBytes(8).toString("hex"),
        username: claims.sub,
        ...claims,
      };
      return Promise.resolve(signRs256({ alg: "RS256", kid }, payload, key));
    },
    close: () => loopback.close(),
  };
}

/** A compact JWS, RS256: base64url header and payload, signed over both with the dot. */
function signRs256(header: object, payload: object, key: KeyObject): string {
  const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
  const signingInput = `${encode(header)}.${encode(payload)}`;
  const signature = sign("sha256", Buffer.from(signingInput), key).toString("base64url");
  return `${signingInput}.${signature}`;
}
