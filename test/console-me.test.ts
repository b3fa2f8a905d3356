import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as forward } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Provider from "oidc-provider";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser as PageClient } from "./support/browser";
import {
  type ConsoleStage,
  horizontalOverflow,
  seriousFindings,
  signedInPage,
  signIn,
  startConsoleStage,
} from "./support/console";
import { closableOnLoopback, type Loopback, listenOnLoopback } from "./support/loopback";
import { type OAuthUpstream, providerConfig, startOAuthUpstream } from "./support/oauth-upstream";
import { providerKeys } from "./support/oidc-issuer";

// The Me page and signing in to the console with the stage's OAuth issuer, in Chromium:
// connecting an account at a real OAuth provider (oidc-provider) through its own pages, and the
// authorization code flow with PKCE run by the console itself against another oidc-provider.
// The stages listen on ports chosen before they start, as their redirect URIs must name them.

/** The console's client at the issuer: public (no secret), redirect URI `<stage>/console`. */
const CONSOLE_CLIENT = "toolbus-console";
const SCOPE = "toolbus";

let keyDir: string;

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), "toolbus-console-me-"));
  process.env.TOOLBUS_CONNECTION_KEY_FILE = join(keyDir, "connection-key");
});

afterAll(async () => {
  delete process.env.TOOLBUS_CONNECTION_KEY_FILE;
  if (keyDir) await rm(keyDir, { recursive: true, force: true });
});

async function openMe(page: Page): Promise<void> {
  await page.getByRole("link", { name: "Me", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Me" }).waitFor();
}

/** GitHub's entry on the Me page. */
function githubOn(page: Page) {
  return page.getByRole("listitem").filter({ hasText: "GitHub" });
}

/** The value a facts list gives for `label`. */
function fact(page: Page, label: string) {
  return page.locator(`dt:text-is("${label}") + dd`);
}

/** oidc-provider's development pages: sign in as `login` (any password), then consent. */
async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.getByPlaceholder("Enter any login").fill(login);
  await page.getByPlaceholder("and password").fill("any");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe("the Me page", () => {
  let stage: ConsoleStage;
  let plain: ConsoleStage;
  let upstream: OAuthUpstream;

  beforeAll(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    upstream = await startOAuthUpstream({
      scopes: ["repo"],
      redirectUris: [`${publicUrl}/connect/github/callback`],
    });
    [stage, plain] = await Promise.all([
      startConsoleStage({
        port,
        config: {
          // The provider is on loopback, which outbound requests may reach only when allowed.
          outbound: { allowHosts: ["127.0.0.1"] },
          connections: {
            publicUrl,
            providers: {
              github: providerConfig(upstream, "GITHUB_OAUTH_SECRET", ["repo"]),
            },
            // github_api acts as its caller: a call is what finds a connection expired.
            credentials: { github_api: "user" },
          },
        },
        secrets: { GITHUB_OAUTH_SECRET: upstream.clientSecret },
      }),
      startConsoleStage(),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stage?.stop(), plain?.stop()]);
    await upstream?.close();
  }, 60_000);

  it("shows the signed-in key's id, role, name and age, and how it signed in", async () => {
    const { key, keyId } = await stage.key("me-page-member", "member");
    const { page, problems } = await signedInPage(stage, key);
    await openMe(page);
    expect(await fact(page, "ID").textContent()).toBe(keyId);
    expect(await fact(page, "Role").textContent()).toBe("member");
    expect(await fact(page, "Signed in with").textContent()).toBe(
      `the API key me-page-member (${keyId})`,
    );
    // The key's own record: when it was made and (the sign-in itself used it) last used.
    expect(await fact(page, "Key created").locator("time").getAttribute("datetime")).toMatch(
      /^\d{4}-\d{2}-\d{2}T/,
    );
    expect(
      await page.getByRole("link", { name: "Me", exact: true }).getAttribute("aria-current"),
    ).toBe("page");
    // Not connected yet: GitHub is offered with a Connect button and nothing to disconnect.
    const github = githubOn(page);
    await github.getByText("Not connected").waitFor();
    expect(await github.getByRole("button", { name: "Disconnect GitHub" }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("connects a GitHub account through the provider's consent in a new tab, then disconnects it after a confirmation", async () => {
    const { key } = await stage.key("me-page-connects", "member");
    const { page, problems } = await signedInPage(stage, key);
    await openMe(page);
    const github = githubOn(page);

    const opened = page.context().waitForEvent("page");
    await github.getByRole("button", { name: "Connect GitHub" }).click();
    const consent = await opened;
    await signInAtProvider(consent, "ada");
    await consent.getByRole("heading", { name: "GitHub connected" }).waitFor();
    // The tab was opened with noopener: on the console's origin again (the API's callback page),
    // its session storage is its own, not a copy of the console tab's with the credential, and it
    // has no way back to the console's window.
    expect(new URL(consent.url()).origin).toBe(stage.url);
    expect(await consent.evaluate("sessionStorage.getItem('toolbus.credential')")).toBeNull();
    expect(await consent.evaluate("window.opener")).toBeNull();
    expect(await page.evaluate("sessionStorage.getItem('toolbus.credential')")).toBe(key);
    await consent.close();

    // The console tab noticed by itself, without a reload.
    await github.getByText("Connected", { exact: true }).waitFor();
    await page.getByRole("status").getByText("GitHub is connected.").waitFor();
    const listed = await stage.system.request("/v1/connections", { key });
    expect(
      ((await listed.json()) as { connections: { provider: string; status: string }[] })
        .connections,
    ).toMatchObject([{ provider: "github", status: "connected" }]);
    expect(upstream.codeExchangeCount()).toBeGreaterThanOrEqual(1);

    // Disconnect asks first, with the focus on the choice that keeps the account; Escape and
    // Cancel keep it, and the focus goes back to Disconnect.
    const activeText = () =>
      page.evaluate("document.activeElement && document.activeElement.textContent");
    await github.getByRole("button", { name: "Disconnect GitHub" }).click();
    await github.getByText("Disconnect GitHub? Tools that act as you").waitFor();
    expect(await activeText()).toBe("Cancel");
    await page.keyboard.press("Escape");
    await github.getByRole("button", { name: "Disconnect GitHub" }).waitFor();
    expect(await github.getByText("Disconnect GitHub? Tools that act as you").count()).toBe(0);
    expect(await activeText()).toBe("Disconnect");
    await github.getByRole("button", { name: "Disconnect GitHub" }).click();
    await github.getByRole("button", { name: "Cancel" }).click();
    expect(await activeText()).toBe("Disconnect");
    expect(await github.getByText("Connected", { exact: true }).isVisible()).toBe(true);
    const kept = await stage.system.request("/v1/connections", { key });
    expect(((await kept.json()) as { connections: unknown[] }).connections).toHaveLength(1);

    await github.getByRole("button", { name: "Disconnect GitHub" }).click();
    await github.getByRole("button", { name: "Yes, disconnect GitHub" }).click();
    await page
      .getByRole("status")
      .getByText("GitHub is disconnected, and its tokens are revoked at GitHub.")
      .waitFor();
    await github.getByText("Not connected").waitFor();
    const gone = await stage.system.request("/v1/connections", { key });
    expect(((await gone.json()) as { connections: unknown[] }).connections).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("offers Reconnect for an expired connection, with the reason, and reconnects it", async () => {
    const { key } = await stage.key("me-page-reconnects", "member");
    // Connected outside the console, with access tokens that are due for a refresh at once.
    upstream.setAccessTokenTtl(30);
    const link = await stage.system.request("/v1/connections/github", { method: "POST", key });
    const { url } = (await link.json()) as { url: string };
    expect((await new PageClient().authorize(url, "grace")).status).toBe(200);
    upstream.setAccessTokenTtl(300);
    // The provider takes the grant back: the next refresh, on a call acting as grace, fails.
    await upstream.revokeAll("grace");
    const call = await stage.system.request(`/v1/runs/${stage.system.runId()}/calls`, {
      method: "POST",
      key,
      json: {
        tool: "github_api",
        input: { action: "get_issue", owner: "acme", repo: "app", number: 7 },
        wait: 20,
      },
    });
    expect(JSON.stringify(await call.json())).toContain("connection_required");

    const { page } = await signedInPage(stage, key);
    await openMe(page);
    const github = githubOn(page);
    await github.getByText("Expired", { exact: true }).waitFor();
    expect(await github.locator('dt:text-is("Why it expired") + dd').textContent()).toMatch(
      /invalid_grant/,
    );
    const opened = page.context().waitForEvent("page");
    await github.getByRole("button", { name: "Reconnect GitHub" }).click();
    const consent = await opened;
    await signInAtProvider(consent, "grace");
    await consent.getByRole("heading", { name: "GitHub connected" }).waitFor();
    await consent.close();
    await github.getByText("Connected", { exact: true }).waitFor();
    expect(await github.getByRole("button", { name: "Reconnect GitHub" }).count()).toBe(0);
    await page.context().close();
  });

  it("keeps one watch when Connect is pressed twice, and asks nothing while the tab is hidden", async () => {
    const { key } = await stage.key("me-page-watches", "member");
    const { page, problems } = await signedInPage(stage, key);
    await openMe(page);
    const github = githubOn(page);
    await github.getByText("Not connected").waitFor();
    // Each look at the connections takes a while, so the second Connect comes while the first
    // watch is still asking.
    let asked = 0;
    await page.route("**/v1/connections", async (route) => {
      asked++;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    const connect = async () => {
      const opened = page.context().waitForEvent("page");
      await github.getByRole("button", { name: "Connect GitHub" }).click();
      await (await opened).close();
    };
    await connect();
    await page.waitForRequest((request) => new URL(request.url()).pathname === "/v1/connections");
    await connect();
    await page.waitForTimeout(2_000);
    asked = 0;
    await page.waitForTimeout(8_000);
    // One watch: a look every 2 s after the last (1.5 s) one ended, at most 3 in 8 s.
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(3);

    // Hidden, the page stops asking; shown again, it asks at once.
    await page.evaluate(`
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
      document.dispatchEvent(new Event("visibilitychange"));
    `);
    await page.waitForTimeout(2_000);
    asked = 0;
    await page.waitForTimeout(5_000);
    expect(asked).toBe(0);
    const again = page.waitForRequest(
      (request) => new URL(request.url()).pathname === "/v1/connections",
      { timeout: 1_000 },
    );
    await page.evaluate(`
      delete document.hidden;
      delete document.visibilityState;
      document.dispatchEvent(new Event("visibilitychange"));
    `);
    await again;
    expect(problems).toEqual([]);
    await page.context().close();
  }, 40_000);

  for (const width of [1280, 390]) {
    it(`has no serious accessibility finding and no horizontal scroll at ${width} px`, async () => {
      const { page } = await signedInPage(stage, stage.system.adminKey, { width });
      await openMe(page);
      await githubOn(page).waitFor();
      expect(await seriousFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      await page.context().close();
    });
  }

  it("says plainly when the stage has no connected accounts configured", async () => {
    const { page } = await plain.page();
    await signIn(plain, page, plain.system.adminKey);
    await openMe(page);
    await page.getByText("This stage has no connected accounts configured").waitFor();
    expect(await page.getByRole("button", { name: /^Connect/ }).count()).toBe(0);
    expect(await fact(page, "Role").textContent()).toBe("admin");
    await page.context().close();
  });
});

describe("signing in to the console with the stage's OAuth issuer", () => {
  let stage: ConsoleStage;
  let keysOnly: ConsoleStage;
  /** A stage whose issuer's token endpoint is on another origin than the issuer, as Cognito's. */
  let cognito: ConsoleStage;
  let issuer: Loopback;
  let issuerUrl: string;
  /** The token endpoint on another origin: a loopback port that forwards to the issuer's. */
  let tokenProxy: Loopback;
  /** Token requests the issuer answered, whatever their outcome. */
  let tokenRequests = 0;
  /** Of them, those that came through the other origin. */
  let proxiedTokenRequests = 0;

  beforeAll(async () => {
    const http = createServer();
    http.listen(0, "127.0.0.1");
    issuer = await closableOnLoopback(http, "");
    issuerUrl = `http://127.0.0.1:${issuer.port}`;
    tokenProxy = await listenOnLoopback(async (req, res) => {
      if (req.method !== "POST" || req.url !== "/oauth2/token") {
        res.writeHead(404).end();
        return;
      }
      proxiedTokenRequests++;
      await new Promise<void>((resolve, reject) => {
        const onward = forward(
          {
            host: "127.0.0.1",
            port: issuer.port,
            path: "/token",
            method: "POST",
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res).on("finish", resolve);
          },
        );
        onward.on("error", reject);
        req.pipe(onward);
      });
    }, "");
    const [port, cognitoPort] = await Promise.all([freePort(), freePort()]);
    const consoleUrl = `http://127.0.0.1:${port}`;
    const cognitoUrl = `http://127.0.0.1:${cognitoPort}`;
    const resource = `${consoleUrl}/mcp`;
    const provider = new Provider(issuerUrl, {
      clients: [
        {
          client_id: CONSOLE_CLIENT,
          token_endpoint_auth_method: "none",
          redirect_uris: [`${consoleUrl}/console`, `${cognitoUrl}/console`],
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
      ],
      ...providerKeys(),
      scopes: ["openid", SCOPE],
      pkce: { required: () => true },
      // The console's page calls the token endpoint from its own origin.
      clientBasedCORS: (_ctx, origin, client) =>
        (client.redirectUris ?? []).some((uri) => new URL(uri).origin === origin),
      ttl: {
        AccessToken: 300,
        AuthorizationCode: 60,
        Grant: 3600,
        IdToken: 300,
        Interaction: 600,
        Session: 3600,
      },
      findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
      // token_use as Cognito's access tokens carry it, which a stage with clientIds requires.
      extraTokenClaims: async () => ({ groups: ["toolbus-members"], token_use: "access" }),
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => ({
            scope: SCOPE,
            audience: indicator,
            accessTokenTTL: 300,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          }),
        },
      },
    });
    const handle = provider.callback();
    /** The issuer's metadata as the Cognito-like stage's page is given it (below). */
    let elsewhere: string | undefined;
    http.on("request", (req, res) => {
      if (req.method === "POST" && req.url?.startsWith("/token")) tokenRequests++;
      // To the Cognito-like stage's page, the metadata names the token endpoint on the other
      // origin, as Cognito's does.
      if (
        elsewhere &&
        req.url === "/.well-known/openid-configuration" &&
        req.headers.origin === cognitoUrl
      ) {
        res.writeHead(200, {
          "content-type": "application/json",
          "access-control-allow-origin": "*",
        });
        res.end(elsewhere);
        return;
      }
      handle(req, res);
    });
    const metadata = (await (
      await fetch(`${issuerUrl}/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    elsewhere = JSON.stringify({ ...metadata, token_endpoint: `${tokenProxy.url}/oauth2/token` });
    [stage, keysOnly, cognito] = await Promise.all([
      startConsoleStage({
        port,
        config: {
          auth: {
            oauth: {
              issuer: issuerUrl,
              resource,
              consoleClientId: CONSOLE_CLIENT,
              roles: { claim: "groups", map: { "toolbus-members": "member" } },
              scopesSupported: [SCOPE],
            },
          },
        },
      }),
      startConsoleStage(),
      startConsoleStage({
        port: cognitoPort,
        config: {
          auth: {
            oauth: {
              issuer: issuerUrl,
              resource: `${cognitoUrl}/mcp`,
              // Cognito's access tokens carry no aud: the client is what is checked.
              clientIds: [CONSOLE_CLIENT],
              consoleClientId: CONSOLE_CLIENT,
              consoleTokenEndpoint: `${tokenProxy.url}/oauth2/token`,
              roles: { claim: "groups", map: { "toolbus-members": "member" } },
              scopesSupported: [SCOPE],
            },
          },
        },
      }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([stage?.stop(), keysOnly?.stop(), cognito?.stop()]);
    await Promise.all([issuer?.close(), tokenProxy?.close()]);
  }, 60_000);

  it("lets the page reach the issuer's origin only on a stage whose console signs in there", async () => {
    const withIssuer = await fetch(`${stage.url}/console`);
    const policy = withIssuer.headers.get("content-security-policy") ?? "";
    expect(policy).toContain(`connect-src 'self' ${issuerUrl};`);
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("require-trusted-types-for 'script'");
    await withIssuer.text();
    const settings = await fetch(`${stage.url}/console/settings`);
    expect(await settings.json()).toEqual({
      oauth: { clientId: CONSOLE_CLIENT, issuer: issuerUrl },
    });

    const plain = await fetch(`${keysOnly.url}/console`);
    expect(plain.headers.get("content-security-policy")).toContain("connect-src 'self';");
    await plain.text();
    expect(await (await fetch(`${keysOnly.url}/console/settings`)).json()).toEqual({});
    const { page, problems } = await keysOnly.page();
    await page.goto(`${keysOnly.url}/console`);
    await page.getByLabel("API key").waitFor();
    // The page has asked whether the stage's issuer signs people in here, and was told no.
    await page.locator(".sign-in-other:not([aria-busy])").waitFor({ state: "attached" });
    expect(await page.getByRole("button", { name: /^Sign in with/ }).count()).toBe(0);
    // Asking left no failed request behind, and nothing else went wrong.
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("signs in with the authorization code and PKCE (S256), and shows the catalog", async () => {
    const { page, problems } = await stage.page();
    const authorizations: URL[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === issuerUrl && url.pathname === "/auth") authorizations.push(url);
    });
    await page.goto(`${stage.url}/console#/me`);
    const button = page.getByRole("button", { name: `Sign in with 127.0.0.1:${issuer.port}` });
    await button.waitFor();
    expect(await seriousFindings(page)).toEqual([]);
    await button.click();
    await signInAtProvider(page, "ada");
    // Back at the page it started from, signed in with the issuer's token.
    await page.getByRole("heading", { level: 1, name: "Me" }).waitFor();
    expect(await fact(page, "Signed in with").textContent()).toBe(`an OAuth token of ${issuerUrl}`);
    expect(await fact(page, "Role").textContent()).toBe("member");
    await page.getByRole("link", { name: "Catalog" }).click();
    await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
    expect(await page.getByRole("row").count()).toBeGreaterThan(5);

    const [authorization] = authorizations;
    expect(authorization?.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorization?.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorization?.searchParams.get("client_id")).toBe(CONSOLE_CLIENT);
    expect(authorization?.searchParams.get("redirect_uri")).toBe(`${stage.url}/console`);
    // The code is not left in the address bar, and only the token is kept in the tab.
    expect(new URL(page.url()).search).toBe("");
    const stored = (await page.evaluate("Object.keys(sessionStorage)")) as string[];
    expect(stored).toEqual(["toolbus.credential"]);
    const token = (await page.evaluate("sessionStorage.getItem('toolbus.credential')")) as string;
    const me = await stage.system.request("/v1/me", { key: token });
    expect(((await me.json()) as { kind: string }).kind).toBe("oauth");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("refuses a callback whose state is not the one the tab kept, and exchanges nothing", async () => {
    const { page } = await stage.page();
    await page.goto(`${stage.url}/console`);
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await page.getByPlaceholder("Enter any login").waitFor();
    const before = tokenRequests;
    await page.goto(`${stage.url}/console?code=stolen-code&state=forged-state`);
    await page
      .getByRole("alert")
      .getByText("does not belong to the sign-in this tab started")
      .waitFor();
    expect(await page.getByLabel("API key").isVisible()).toBe(true);
    expect(tokenRequests).toBe(before);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expect(new URL(page.url()).search).toBe("");
    await page.context().close();
  });

  it("says the sign-in was declined when the person cancels at the issuer", async () => {
    const { page } = await stage.page();
    await page.goto(`${stage.url}/console`);
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await page.getByRole("link", { name: "[ Cancel ]" }).click();
    await page.getByRole("alert").getByText("The sign-in was declined at the issuer").waitFor();
    expect(await page.getByLabel("API key").isVisible()).toBe(true);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.context().close();
  });

  it("refuses a callback without iss from an issuer that names itself in every answer (RFC 9207)", async () => {
    const { page } = await stage.page();
    let state: string | null = null;
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.origin === issuerUrl && url.pathname === "/auth")
        state ??= url.searchParams.get("state");
    });
    await page.goto(`${stage.url}/console`);
    await page.getByRole("button", { name: /^Sign in with/ }).click();
    await page.getByPlaceholder("Enter any login").waitFor();
    expect(state).toMatch(/^[A-Za-z0-9_-]+$/);
    const before = tokenRequests;
    // The right state, but no iss: oidc-provider says authorization_response_iss_parameter_supported.
    await page.goto(`${stage.url}/console?code=some-code&state=${state}`);
    await page.getByRole("alert").getByText("does not name the issuer").waitFor();
    expect(tokenRequests).toBe(before);
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.context().close();
  });

  it("signs in where the issuer's token endpoint is on another origin (Cognito), as the stage names it", async () => {
    const served = await fetch(`${cognito.url}/console`);
    const policy = served.headers.get("content-security-policy") ?? "";
    expect(policy).toContain(`connect-src 'self' ${issuerUrl} ${tokenProxy.url};`);
    await served.text();
    expect(await (await fetch(`${cognito.url}/console/settings`)).json()).toEqual({
      oauth: {
        clientId: CONSOLE_CLIENT,
        issuer: issuerUrl,
        tokenEndpoint: `${tokenProxy.url}/oauth2/token`,
      },
    });
    const { page, problems } = await cognito.page();
    await page.goto(`${cognito.url}/console`);
    await page.getByRole("button", { name: `Sign in with 127.0.0.1:${issuer.port}` }).click();
    await signInAtProvider(page, "grace");
    await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
    expect(proxiedTokenRequests).toBe(1);
    const token = (await page.evaluate("sessionStorage.getItem('toolbus.credential')")) as string;
    const me = await cognito.system.request("/v1/me", { key: token });
    expect(await me.json()).toMatchObject({ kind: "oauth", role: "member" });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
