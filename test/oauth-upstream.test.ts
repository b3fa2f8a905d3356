import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "./support/browser";
import { type Loopback, listenOnLoopback } from "./support/loopback";
import { type OAuthUpstream, startOAuthUpstream } from "./support/oauth-upstream";

/**
 * The upstream OAuth provider tests of connected accounts run against, on its own: a client
 * of it (as Toolbus is) goes through the authorization code flow with PKCE in a browser, and
 * refreshes, revokes and calls the API with what it gets.
 */

let upstream: OAuthUpstream;
/** The client's redirect URI, recording the query of every request reaching it. */
let callback: Loopback;
const arrivals: URLSearchParams[] = [];

beforeAll(async () => {
  callback = await listenOnLoopback(async (req, res) => {
    arrivals.push(new URL(req.url ?? "/", "http://127.0.0.1").searchParams);
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<p>connected</p>");
  }, "/connect/acme/callback");
  upstream = await startOAuthUpstream({ redirectUris: [callback.url] });
});

afterAll(async () => {
  await Promise.all([upstream?.close(), callback?.close()]);
});

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

/** An authorization request as Toolbus makes one, and the verifier it keeps. */
function authorizationRequest(
  options: { redirectUri?: string; scope?: string; pkce?: boolean } = {},
) {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(16).toString("base64url");
  const url = new URL(upstream.authorizeUrl);
  url.search = new URLSearchParams({
    client_id: upstream.clientId,
    response_type: "code",
    redirect_uri: options.redirectUri ?? callback.url,
    scope: options.scope ?? "read",
    state,
    ...(options.pkce === false
      ? {}
      : {
          code_challenge: createHash("sha256").update(verifier).digest("base64url"),
          code_challenge_method: "S256",
        }),
  }).toString();
  return { url: url.href, verifier, state };
}

/** `login` signs in and consents in `browser`; the query the redirect URI received. */
async function authorize(
  browser: Browser,
  login: string,
  request: ReturnType<typeof authorizationRequest>,
) {
  const page = await browser.authorize(request.url, login);
  expect(page.status).toBe(200);
  expect(page.url.startsWith(callback.url)).toBe(true);
  const query = new URL(page.url).searchParams;
  // The browser opened the redirect URI, which saw what it was sent.
  expect(arrivals.some((arrived) => arrived.toString() === query.toString())).toBe(true);
  return query;
}

const basic = () =>
  `Basic ${Buffer.from(
    `${encodeURIComponent(upstream.clientId)}:${encodeURIComponent(upstream.clientSecret)}`,
  ).toString("base64")}`;

async function tokenRequest(
  params: Record<string, string>,
  auth: "basic" | "post" = "basic",
): Promise<Response> {
  const body = new URLSearchParams(params);
  if (auth === "post") {
    body.set("client_id", upstream.clientId);
    body.set("client_secret", upstream.clientSecret);
  }
  return fetch(upstream.tokenUrl, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(auth === "basic" ? { authorization: basic() } : {}),
    },
    body,
  });
}

async function tokens(response: Response): Promise<Tokens> {
  const body = (await response.json()) as Tokens & { error?: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function errorOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: string }).error;
}

/** A new connection of `login`'s: signed in, consented, the code exchanged. */
async function connect(login: string, browser = new Browser()) {
  const request = authorizationRequest();
  const query = await authorize(browser, login, request);
  return tokens(
    await tokenRequest({
      grant_type: "authorization_code",
      code: query.get("code") ?? "",
      redirect_uri: callback.url,
      code_verifier: request.verifier,
    }),
  );
}

const refresh = (refreshToken: string, auth: "basic" | "post" = "basic") =>
  tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken }, auth);

const me = (accessToken: string) =>
  fetch(upstream.apiUrl, { headers: { authorization: `Bearer ${accessToken}` } });

async function login(accessToken: string) {
  const response = await me(accessToken);
  expect(response.status).toBe(200);
  return ((await response.json()) as { login: string }).login;
}

const revoke = (token: string, hint?: string) =>
  fetch(upstream.revokeUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic() },
    body: new URLSearchParams({ token, ...(hint ? { token_type_hint: hint } : {}) }),
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the upstream OAuth provider", () => {
  it("advertises its endpoints, S256 and the iss authorization response parameter", async () => {
    const response = await fetch(`${upstream.issuer}/.well-known/openid-configuration`);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: upstream.issuer,
      authorization_endpoint: upstream.authorizeUrl,
      token_endpoint: upstream.tokenUrl,
      revocation_endpoint: upstream.revokeUrl,
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it("signs a person in through its pages and sends code, state and iss to the redirect URI", async () => {
    const browser = new Browser();
    const request = authorizationRequest();
    const query = await authorize(browser, "alice", request);
    expect(query.get("state")).toBe(request.state);
    expect(query.get("iss")).toBe(upstream.issuer);
    expect(query.get("code")).toEqual(expect.any(String));

    const before = upstream.codeExchangeCount();
    const issued = await tokens(
      await tokenRequest({
        grant_type: "authorization_code",
        code: query.get("code") ?? "",
        redirect_uri: callback.url,
        code_verifier: request.verifier,
      }),
    );
    expect(issued).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "read" });
    expect(issued.refresh_token).toEqual(expect.any(String));
    expect(upstream.codeExchangeCount()).toBe(before + 1);

    expect(await login(issued.access_token)).toBe("alice");
    expect(await (await me(issued.access_token)).json()).toMatchObject({
      login: "alice",
      scopes: ["read"],
      clientId: upstream.clientId,
    });
    expect(upstream.apiCalls().at(-1)).toEqual({ login: "alice", method: "GET", path: "/api/me" });

    // Signed in already and consented: the next authorization comes straight back.
    const second = authorizationRequest();
    const page = await browser.open(second.url);
    expect(page.url.startsWith(callback.url)).toBe(true);
    expect(new URL(page.url).searchParams.get("state")).toBe(second.state);

    // The code is single use; oidc-provider takes a second redemption for a stolen code and
    // revokes the grant, the tokens issued for the code with it.
    const again = await tokenRequest({
      grant_type: "authorization_code",
      code: query.get("code") ?? "",
      redirect_uri: callback.url,
      code_verifier: request.verifier,
    });
    expect(again.status).toBe(400);
    expect(await errorOf(again)).toBe("invalid_grant");
    expect((await me(issued.access_token)).status).toBe(401);
  });

  it("keeps two browsers two people", async () => {
    const [alice, bob] = await Promise.all([connect("alice"), connect("bob")]);
    expect(await login(alice.access_token)).toBe("alice");
    expect(await login(bob.access_token)).toBe("bob");
  });

  it("requires PKCE, and the verifier that matches the challenge", async () => {
    const browser = new Browser();
    const page = await browser.open(authorizationRequest({ pkce: false }).url, {
      stopAt: (url) => url.href.startsWith(callback.url),
    });
    expect(page.stopped).toBe(true);
    const refused = new URL(page.url).searchParams;
    expect(refused.get("error")).toBe("invalid_request");
    expect(refused.get("iss")).toBe(upstream.issuer);

    const request = authorizationRequest();
    const query = await authorize(browser, "carol", request);
    const wrong = await tokenRequest({
      grant_type: "authorization_code",
      code: query.get("code") ?? "",
      redirect_uri: callback.url,
      code_verifier: randomBytes(32).toString("base64url"),
    });
    expect(wrong.status).toBe(400);
    expect(await errorOf(wrong)).toBe("invalid_grant");
  });

  it("authenticates the client by client_secret_post too, and refuses a wrong secret", async () => {
    const issued = await connect("dave");
    expect(
      await login((await tokens(await refresh(issued.refresh_token, "post"))).access_token),
    ).toBe("dave");
    const wrong = await fetch(upstream.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: issued.refresh_token,
        client_id: upstream.clientId,
        client_secret: "not-the-secret",
      }),
    });
    expect(wrong.status).toBe(401);
    expect(await errorOf(wrong)).toBe("invalid_client");
  });

  it("rotates the refresh token on every use; the old one then fails, and takes the grant with it", async () => {
    const issued = await connect("erin");
    const before = upstream.refreshCount();
    const attempts = upstream.refreshAttempts();
    const refreshed = await tokens(await refresh(issued.refresh_token));
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(issued.refresh_token);
    expect(refreshed.access_token).not.toBe(issued.access_token);
    expect(await login(refreshed.access_token)).toBe("erin");
    expect(upstream.refreshCount()).toBe(before + 1);

    const reused = await refresh(issued.refresh_token);
    expect(reused.status).toBe(400);
    expect(await errorOf(reused)).toBe("invalid_grant");
    expect(upstream.refreshCount()).toBe(before + 1);
    expect(upstream.refreshAttempts()).toBe(attempts + 2);

    // oidc-provider treats a used refresh token presented again as theft: the whole grant is
    // revoked, the newest refresh token and access tokens with it.
    const after = await refresh(refreshed.refresh_token);
    expect(await errorOf(after)).toBe("invalid_grant");
    expect((await me(refreshed.access_token)).status).toBe(401);
  });

  it("revokes (RFC 7009) a refresh token, or an access token, with every token of the grant", async () => {
    const first = await connect("frank");
    const refreshed = await tokens(await refresh(first.refresh_token));
    expect((await revoke(refreshed.refresh_token, "refresh_token")).status).toBe(200);
    expect(await errorOf(await refresh(refreshed.refresh_token))).toBe("invalid_grant");
    const response = await me(refreshed.access_token);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');

    // oidc-provider revokes every token of the grant when an access token is revoked too
    // (RFC 7009 §2.1 allows it): the refresh token goes with it.
    const second = await connect("frank");
    expect((await revoke(second.access_token, "access_token")).status).toBe(200);
    expect((await me(second.access_token)).status).toBe(401);
    expect(await errorOf(await refresh(second.refresh_token))).toBe("invalid_grant");

    // Revoking an unknown token is not an error (RFC 7009 §2.2).
    expect((await revoke("no-such-token")).status).toBe(200);
  });

  it("revokes every grant of a person server-side", async () => {
    const browser = new Browser();
    const [one, two, other] = await Promise.all([
      connect("grace", browser),
      connect("grace"),
      connect("heidi"),
    ]);
    expect(await upstream.revokeAll("grace")).toBeGreaterThanOrEqual(1);
    for (const issued of [one, two]) {
      expect((await me(issued.access_token)).status).toBe(401);
      const refused = await refresh(issued.refresh_token);
      expect(refused.status).toBe(400);
      expect(await errorOf(refused)).toBe("invalid_grant");
    }
    expect(await login(other.access_token)).toBe("heidi");
    expect(await login((await tokens(await refresh(other.refresh_token))).access_token)).toBe(
      "heidi",
    );
  });

  it("fails the token endpoint once when told to", async () => {
    const issued = await connect("ivan");
    upstream.failTokenEndpointOnce();
    const failed = await refresh(issued.refresh_token);
    expect(failed.status).toBe(503);
    expect(await errorOf(failed)).toBe("temporarily_unavailable");
    // The failed request never reached the provider: the refresh token is still good.
    expect(await login((await tokens(await refresh(issued.refresh_token))).access_token)).toBe(
      "ivan",
    );
  });

  it("issues short-lived access tokens when told to; a refresh gives a working one", async () => {
    upstream.setAccessTokenTtl(1);
    try {
      const issued = await connect("judy");
      expect(issued.expires_in).toBe(1);
      expect(await login(issued.access_token)).toBe("judy");
      await sleep(2100);
      expect((await me(issued.access_token)).status).toBe(401);
      upstream.setAccessTokenTtl(300);
      const refreshed = await tokens(await refresh(issued.refresh_token));
      expect(refreshed.expires_in).toBe(300);
      expect(await login(refreshed.access_token)).toBe("judy");
    } finally {
      upstream.setAccessTokenTtl(300);
    }
  });

  it("sends a wrong iss, or none, when told to", async () => {
    const browser = new Browser();
    try {
      upstream.setAuthorizationResponseIss("https://mix-up.example");
      expect((await authorize(browser, "kim", authorizationRequest())).get("iss")).toBe(
        "https://mix-up.example",
      );
      upstream.setAuthorizationResponseIss(null);
      const query = await authorize(browser, "kim", authorizationRequest());
      expect(query.has("iss")).toBe(false);
      expect(query.get("code")).toEqual(expect.any(String));
    } finally {
      upstream.setAuthorizationResponseIss(undefined);
    }
    expect((await authorize(browser, "kim", authorizationRequest())).get("iss")).toBe(
      upstream.issuer,
    );
  });

  it("accepts a redirect URI added after it started", async () => {
    const later = `${callback.url.replace("/acme/", "/later/")}`;
    const browser = new Browser();
    const refused = await browser.open(authorizationRequest({ redirectUri: later }).url);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain("invalid_redirect_uri");

    await upstream.addRedirectUri(later);
    const page = await browser.authorize(authorizationRequest({ redirectUri: later }).url, "leo");
    expect(page.status).toBe(200);
    expect(page.url.startsWith(later)).toBe(true);
    expect(new URL(page.url).searchParams.get("iss")).toBe(upstream.issuer);
  });
});
