import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";
import { closableOnLoopback } from "./loopback";
import { providerKeys } from "./oidc-issuer";

/**
 * oidc-provider (panva) on loopback as an upstream OAuth 2.0 provider Toolbus is a client of
 * (as it is of GitHub or Google): one confidential client (client_secret_basic, or
 * client_secret_post), authorization code with PKCE (S256) required, RFC 9207 `iss` in every
 * authorization response, refresh tokens issued on every code exchange and rotated on every
 * use, RFC 7009 revocation, opaque access tokens. Beside it, on the same server, an API under
 * `/api/` that accepts those access tokens, so a test can see whose account a call acted as.
 * People sign in through its development pages (see `Browser.signInAndConsent`): the login
 * is the account id, any password.
 */
export interface OAuthUpstream {
  /** http://127.0.0.1:<port>: the `iss` of authorization responses. */
  issuer: string;
  /** `${issuer}/auth` */
  authorizeUrl: string;
  /** `${issuer}/token` */
  tokenUrl: string;
  /** `${issuer}/token/revocation` (RFC 7009; client authentication as at the token endpoint). */
  revokeUrl: string;
  /**
   * `${issuer}/api/me`: GET with `Authorization: Bearer <access token>` answers 200
   * `{ login, scopes, clientId, method, path }` (login = the account id) or 401 with a
   * `WWW-Authenticate: Bearer error="invalid_token"` challenge. Every path under `/api/` answers
   * alike, for any method.
   */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** The scopes the API grants (what a client may ask for besides offline_access). */
  scopes: string[];
  /** Adds a redirect URI to the client (for one known only once Toolbus listens). */
  addRedirectUri(uri: string): Promise<void>;
  /** How long the access tokens issued from now live, seconds (default 300). */
  setAccessTokenTtl(seconds: number): void;
  /**
   * Revokes, server-side, every grant `accountId` gave the client: its access tokens,
   * refresh tokens and codes die, so the next refresh answers 400 invalid_grant and the API
   * 401. Resolves to how many grants there were.
   */
  revokeAll(accountId: string): Promise<number>;
  /** The token endpoint's next request is answered `status` (default 503), not handled. */
  failTokenEndpointOnce(status?: number): void;
  /** Refresh token grants the token endpoint answered with tokens. */
  refreshCount(): number;
  /** Refresh token grants the token endpoint was asked for (refused ones too). */
  refreshAttempts(): number;
  /** Authorization code grants the token endpoint answered with tokens. */
  codeExchangeCount(): number;
  /** Requests to the API that carried an access token it accepted, newest last. */
  apiCalls(): { login: string; method: string; path: string }[];
  /**
   * What the authorization responses carry as `iss` from now on: a string replaces it,
   * `null` leaves it out, `undefined` (the default) keeps the provider's own (the issuer).
   */
  setAuthorizationResponseIss(iss: string | null | undefined): void;
  close(): Promise<void>;
}

export interface OAuthUpstreamOptions {
  /** The client's redirect URIs (more may be added with `addRedirectUri`). */
  redirectUris?: string[];
  /** Default "toolbus-client". */
  clientId?: string;
  /** Default a random secret. */
  clientSecret?: string;
  /** The scopes the API grants (default ["read", "write"]); others requested are ignored. */
  scopes?: string[];
  /** Default 300 seconds. */
  accessTokenTtl?: number;
  /** Default 86400 seconds. */
  refreshTokenTtl?: number;
}

export async function startOAuthUpstream(
  options: OAuthUpstreamOptions = {},
): Promise<OAuthUpstream> {
  const http = createServer();
  http.listen(0, "127.0.0.1");
  const loopback = await closableOnLoopback(http, "");
  const issuer = `http://127.0.0.1:${loopback.port}`;
  const apiResource = `${issuer}/api`;
  const clientId = options.clientId ?? "toolbus-client";
  const clientSecret = options.clientSecret ?? randomBytes(24).toString("base64url");
  const scopes = options.scopes ?? ["read", "write"];
  const refreshTokenTtl = options.refreshTokenTtl ?? 86_400;
  let accessTokenTtl = options.accessTokenTtl ?? 300;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        token_endpoint_auth_method: "client_secret_basic",
        redirect_uris: options.redirectUris ?? [],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    ...providerKeys(),
    scopes: ["openid", "offline_access"],
    pkce: { required: () => true },
    ttl: {
      AccessToken: () => accessTokenTtl,
      AuthorizationCode: 60,
      Grant: refreshTokenTtl,
      IdToken: 300,
      Interaction: 600,
      RefreshToken: refreshTokenTtl,
      Session: 3600,
    },
    // Without these a refresh token comes only with offline_access, which oidc-provider drops
    // unless the request also says prompt=consent, and dies with the sign-in session.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // A page naming the error (a redirect URI it does not know, say), as the default does.
    renderError: async (ctx, out) => {
      ctx.type = "html";
      ctx.body = `<p>${escapeHtml(out.error)}: ${escapeHtml(out.error_description ?? "")}</p>`;
    },
    features: {
      devInteractions: { enabled: true },
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      // Every access token is for the API (no `resource` parameter needed), opaque.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => apiResource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: scopes.join(" "),
          audience: apiResource,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: "opaque",
        }),
      },
    },
  });

  let refreshes = 0;
  let refreshAttempts = 0;
  let codeExchanges = 0;
  const grantType = (ctx: KoaContextWithOIDC) =>
    (ctx.oidc.params as { grant_type?: string } | undefined)?.grant_type;
  provider.on("grant.success", (ctx: KoaContextWithOIDC) => {
    const type = grantType(ctx);
    if (type === "refresh_token") {
      refreshes++;
      refreshAttempts++;
    } else if (type === "authorization_code") codeExchanges++;
  });
  provider.on("grant.error", (ctx: KoaContextWithOIDC) => {
    if (grantType(ctx) === "refresh_token") refreshAttempts++;
  });
  /** account id → the grants it gave. */
  const grants = new Map<string, Set<string>>();
  provider.on("grant.saved", (grant: { jti: string; accountId?: string }) => {
    if (!grant.accountId) return;
    const ids = grants.get(grant.accountId) ?? new Set<string>();
    ids.add(grant.jti);
    grants.set(grant.accountId, ids);
  });

  let failNextTokenRequest: number | undefined;
  let issOverride: string | null | undefined;
  const calls: { login: string; method: string; path: string }[] = [];
  const redirectUris = async () => {
    const client = await provider.Client.find(clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    return client.redirectUris as string[];
  };

  const serveApi = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    if (!token || token.isExpired) {
      return json(
        401,
        { message: "Bad credentials" },
        { "www-authenticate": 'Bearer error="invalid_token"' },
      );
    }
    const login = token.accountId;
    calls.push({ login, method: req.method ?? "GET", path });
    json(200, {
      login,
      scopes: token.scope ? token.scope.split(" ") : [],
      clientId: token.clientId,
      method: req.method,
      path,
    });
  };

  const handle = provider.callback();
  http.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    if (path === "/api" || path.startsWith("/api/")) {
      req.resume();
      serveApi(req, res, path).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(error));
      });
      return;
    }
    if (path === "/token" && failNextTokenRequest !== undefined) {
      const status = failNextTokenRequest;
      failNextTokenRequest = undefined;
      req.resume();
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "temporarily_unavailable" }));
      return;
    }
    if (issOverride !== undefined) rewriteAuthorizationResponse(res, issuer, issOverride);
    handle(req, res);
  });

  return {
    issuer,
    authorizeUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revokeUrl: `${issuer}/token/revocation`,
    apiUrl: `${issuer}/api/me`,
    clientId,
    clientSecret,
    scopes: [...scopes],
    async addRedirectUri(uri) {
      const uris = await redirectUris();
      if (!uris.includes(uri)) uris.push(uri);
    },
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    async revokeAll(accountId) {
      const ids = [...(grants.get(accountId) ?? [])];
      grants.delete(accountId);
      await Promise.all(
        ids.map((grantId) =>
          Promise.all([
            provider.AccessToken.revokeByGrantId(grantId),
            provider.RefreshToken.revokeByGrantId(grantId),
            provider.AuthorizationCode.revokeByGrantId(grantId),
            provider.Grant.adapter.destroy(grantId),
          ]),
        ),
      );
      return ids.length;
    },
    failTokenEndpointOnce(status = 503) {
      failNextTokenRequest = status;
    },
    refreshCount: () => refreshes,
    refreshAttempts: () => refreshAttempts,
    codeExchangeCount: () => codeExchanges,
    apiCalls: () => [...calls],
    setAuthorizationResponseIss(iss) {
      issOverride = iss;
    },
    close: () => loopback.close(),
  };
}

/**
 * Rewrites the `iss` of the authorization responses this answer may carry (a redirect away
 * from the provider, with `code` or `error`) as it is sent: replaced, or left out when null.
 */
function rewriteAuthorizationResponse(res: ServerResponse, issuer: string, iss: string | null) {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) => {
    if (name.toLowerCase() === "location" && typeof value === "string") {
      const target = new URL(value, issuer);
      const params = target.searchParams;
      if (target.origin !== issuer && (params.has("code") || params.has("error"))) {
        if (iss === null) params.delete("iss");
        else params.set("iss", iss);
        return setHeader(name, target.href);
      }
    }
    return setHeader(name, value);
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A stage's `connections.providers` entry for this upstream: basic client authentication, its
 * endpoints and issuer, the secret named by `secretName` (the test passes the value as a
 * secret of that name).
 */
export function providerConfig(upstream: OAuthUpstream, secretName: string, scopes: string[]) {
  return {
    clientId: upstream.clientId,
    clientSecret: secretName,
    clientAuth: "basic" as const,
    authorizeUrl: upstream.authorizeUrl,
    tokenUrl: upstream.tokenUrl,
    revokeUrl: upstream.revokeUrl,
    issuer: upstream.issuer,
    scopes,
  };
}
