import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { createToolbusClient } from "@toolbus/client";
import { runCli } from "@toolbus/client/cli";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localKeyFile, unseal } from "../packages/core/src/connections/envelope";
import { connectionKey } from "../packages/core/src/store/dynamodb/connections";
import { Browser } from "./support/browser";
import { testDynamoDbClient } from "./support/dynamodb";
import { type OAuthUpstream, providerConfig, startOAuthUpstream } from "./support/oauth-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * Connected accounts over HTTP, end to end: a real Toolbus serving on loopback, a real OAuth
 * provider (oidc-provider) as `github` and as `acme`, and people's browsers (cookie jars) going
 * through its sign-in and consent pages. Nothing is faked: the code is exchanged with PKCE at
 * the provider's token endpoint, and a disconnect revokes at its revocation endpoint.
 */

let upstream: OAuthUpstream;
let system: TestToolbus;
let server: ApiServer;
let base: string;
let keyDir: string;
const previousKeyFile = process.env.TOOLBUS_CONNECTION_KEY_FILE;

/** A port free now, so the stage's publicUrl can name it before Toolbus listens on it. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  keyDir = await mkdtemp(join(tmpdir(), "toolbus-connections-"));
  process.env.TOOLBUS_CONNECTION_KEY_FILE = join(keyDir, "connection-key");
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  upstream = await startOAuthUpstream({
    redirectUris: [`${base}/connect/github/callback`, `${base}/connect/acme/callback`],
  });
  const provider = providerConfig(upstream, "UPSTREAM_CLIENT_SECRET", ["read"]);
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      connections: { publicUrl: base, providers: { github: provider, acme: provider } },
    },
    secrets: { UPSTREAM_CLIENT_SECRET: upstream.clientSecret },
  });
  server = await serveApi(system.app, { port });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await system?.stop();
  await upstream?.close();
  if (previousKeyFile === undefined) delete process.env.TOOLBUS_CONNECTION_KEY_FILE;
  else process.env.TOOLBUS_CONNECTION_KEY_FILE = previousKeyFile;
  await rm(keyDir, { recursive: true, force: true });
}, 60_000);

interface Key {
  key: string;
  keyId: string;
}

/** A new API key of `role`: one principal. */
async function principal(role: string): Promise<Key> {
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: `connections ${role}`, role },
  });
  expect(response.status).toBe(201);
  return (await response.json()) as Key;
}

/** A connect link for the key's principal. */
async function linkFor(key: Key, provider = "github"): Promise<{ url: string; expiresAt: string }> {
  const response = await system.request(`/v1/connections/${provider}`, {
    method: "POST",
    key: key.key,
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { url: string; expiresAt: string };
}

async function connectionsOf(key: Key, query = ""): Promise<{ status: number; body: unknown }> {
  const response = await system.request(`/v1/connections${query}`, { key: key.key });
  return { status: response.status, body: await response.json() };
}

const isCallback = (provider: string) => (url: URL) =>
  url.origin === base && url.pathname === `/connect/${provider}/callback`;

/**
 * The tokens stored for a connection, opened with the stage's key file as only Toolbus can:
 * the test's way to reach the provider's API with them. Also checks that the item holds no
 * token in the clear.
 */
async function storedTokens(
  principalId: string,
  provider: string,
): Promise<{ accessToken: string; refreshToken?: string }> {
  const dynamodb = testDynamoDbClient();
  try {
    const key = connectionKey(principalId, provider);
    const { Item } = await dynamodb.send(new GetCommand({ TableName: system.tableName, Key: key }));
    if (!Item) throw new Error(`no ${provider} connection stored for ${principalId}`);
    const tokens = JSON.parse(
      await unseal(
        localKeyFile(process.env.TOOLBUS_CONNECTION_KEY_FILE ?? ""),
        Item.sealed as Uint8Array,
        key,
      ),
    ) as { accessToken: string; refreshToken?: string };
    const clear = JSON.stringify(Item, (_name, value) =>
      value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : value,
    );
    expect(clear).not.toContain(tokens.accessToken);
    if (tokens.refreshToken) expect(clear).not.toContain(tokens.refreshToken);
    return tokens;
  } finally {
    dynamodb.destroy();
  }
}

/** What the provider's API answers the access token: 200 with whose account, or 401. */
async function upstreamMe(accessToken: string): Promise<{ status: number; login?: string }> {
  const response = await fetch(upstream.apiUrl, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const body = (await response.json()) as { login?: string };
  return { status: response.status, ...(body.login ? { login: body.login } : {}) };
}

/** Every key anywhere in a JSON value: what a view carries. */
function keysIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysIn);
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, inner]) => [key, ...keysIn(inner)]);
  }
  return [];
}

describe("connecting an account in a browser", () => {
  it("takes a member from a link through the provider's consent to a connected account", async () => {
    const alice = await principal("member");
    const link = await linkFor(alice);
    expect(link.url).toMatch(new RegExp(`^${base}/connect/github\\?ticket=[A-Za-z0-9_-]+$`));
    expect(Date.parse(link.expiresAt)).toBeGreaterThan(Date.now() + 14 * 60_000);

    const browser = new Browser();
    const page = await browser.authorize(link.url, "alice");
    expect(page.url.startsWith(`${base}/connect/github/callback?`)).toBe(true);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.body).toContain("GitHub is connected. You can close this window.");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    // The binding cookie is cleared once used.
    expect(browser.cookie(`${base}/connect/github/callback`, "toolbus_connect")).toBeUndefined();
    expect(upstream.codeExchangeCount()).toBeGreaterThanOrEqual(1);

    const { status, body } = await connectionsOf(alice);
    expect(status).toBe(200);
    expect(body).toEqual({
      connections: [
        {
          principalId: alice.keyId,
          provider: "github",
          status: "connected",
          scopes: expect.arrayContaining(["read"]),
          connectedAt: expect.any(String),
          accessExpiresAt: expect.any(String),
        },
      ],
    });
    // A view: no token, sealed blob or secret under any name.
    expect(keysIn(body).filter((key) => /token|sealed|secret|verifier/i.test(key))).toEqual([]);
    // What is stored (sealed) is alice's own access at the provider, with a refresh token.
    const tokens = await storedTokens(alice.keyId, "github");
    expect(tokens.refreshToken).toEqual(expect.any(String));
    expect(await upstreamMe(tokens.accessToken)).toEqual({ status: 200, login: "alice" });
    expect(JSON.stringify(body)).not.toContain(tokens.accessToken);

    const providers = await system.request("/v1/connections/providers", { key: alice.key });
    expect(providers.status).toBe(200);
    expect(await providers.json()).toEqual({
      providers: [
        { name: "github", scopes: ["read"], connected: true, status: "connected" },
        { name: "acme", scopes: ["read"], connected: false },
      ],
    });
  });

  it("answers /connect with a redirect to the provider and a browser-bound cookie", async () => {
    const member = await principal("member");
    const link = await linkFor(member);
    const response = await fetch(link.url, { redirect: "manual" });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(upstream.authorizeUrl);
    expect(location.searchParams.get("redirect_uri")).toBe(`${base}/connect/github/callback`);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    const cookie = response.headers.getSetCookie();
    expect(cookie).toHaveLength(1);
    const [pair, ...attributes] = (cookie[0] ?? "").split("; ");
    expect(pair).toMatch(/^toolbus_connect=[A-Za-z0-9_-]{32,}$/);
    expect(attributes.sort()).toEqual(
      ["HttpOnly", "Max-Age=600", "Path=/connect/github", "SameSite=Lax"].sort(),
    );
    // http://127.0.0.1 here: Secure only where the public URL is https.
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("connects with the caller's own key instead of a ticket", async () => {
    const member = await principal("member");
    const browser = new Browser();
    const started = await browser.request(`${base}/connect/acme`, {
      headers: { authorization: `Bearer ${member.key}` },
    });
    expect(started.status).toBe(302);
    const page = await browser.authorize(started.headers.get("location") ?? "", "erin");
    expect(page.status).toBe(200);
    expect(page.body).toContain("acme is connected.");
    const { body } = await connectionsOf(member);
    expect(body).toMatchObject({ connections: [{ provider: "acme", status: "connected" }] });
  });

  it("refuses a browser with neither a ticket nor a key, on a page", async () => {
    const response = await fetch(`${base}/connect/github`, { redirect: "manual" });
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(await response.text()).toContain("holds no ticket");
  });

  it("refuses a flow finished in another person's browser, and stores nothing", async () => {
    const carol = await principal("member");
    const link = await linkFor(carol);
    const carolsBrowser = new Browser();
    const atCallback = await carolsBrowser.authorize(link.url, "carol", {
      stopAt: isCallback("github"),
    });
    expect(atCallback.stopped).toBe(true);
    expect(new URL(atCallback.url).searchParams.get("code")).toBeTruthy();

    // Bob's browser never started it: it holds no binding cookie for it.
    const bobsBrowser = new Browser();
    const exchanges = upstream.codeExchangeCount();
    const page = await bobsBrowser.open(atCallback.url);
    expect(page.status).toBe(400);
    expect(page.body).toContain("started in another browser");
    // Refused before the code was exchanged.
    expect(upstream.codeExchangeCount()).toBe(exchanges);
    expect((await connectionsOf(carol)).body).toEqual({ connections: [] });

    // The state was taken: not even Carol's own browser finishes it now.
    const again = await carolsBrowser.open(atCallback.url);
    expect(again.status).toBe(400);
    expect(again.body).toContain("expired or was already used");
    expect((await connectionsOf(carol)).body).toEqual({ connections: [] });
  });

  it("takes a callback once: a replay is refused", async () => {
    const dave = await principal("member");
    const link = await linkFor(dave);
    const browser = new Browser();
    const atCallback = await browser.authorize(link.url, "dave", { stopAt: isCallback("github") });
    expect(atCallback.stopped).toBe(true);
    const exchanges = upstream.codeExchangeCount();
    const first = await browser.open(atCallback.url);
    expect(first.status).toBe(200);
    expect(upstream.codeExchangeCount()).toBe(exchanges + 1);
    const replay = await browser.open(atCallback.url);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain("expired or was already used");
    // The code was not presented again.
    expect(upstream.codeExchangeCount()).toBe(exchanges + 1);
  });

  it("shows the provider's refusal escaped, on a 400 page", async () => {
    const member = await principal("member");
    const link = await linkFor(member);
    const browser = new Browser();
    const atCallback = await browser.authorize(link.url, "frank", { stopAt: isCallback("github") });
    const refused = new URL(atCallback.url);
    refused.searchParams.delete("code");
    refused.searchParams.set("error", "<script>alert(1)</script>");
    const page = await browser.open(refused);
    expect(page.status).toBe(400);
    expect(page.body).not.toContain("<script>");
    expect(page.body).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect((await connectionsOf(member)).body).toEqual({ connections: [] });
  });

  it("refuses a ticket for one provider on another's connect route", async () => {
    const member = await principal("member");
    const link = await linkFor(member, "github");
    const ticket = new URL(link.url).searchParams.get("ticket") ?? "";
    const response = await fetch(`${base}/connect/acme?ticket=${ticket}`, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(await response.text()).toContain("not for this provider");
  });

  it("answers an unknown provider 404: JSON under /v1, a page under /connect", async () => {
    const member = await principal("member");
    const json = await system.request("/v1/connections/nope", { method: "POST", key: member.key });
    expect(json.status).toBe(404);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe("not_found");
    const removed = await system.request("/v1/connections/nope", {
      method: "DELETE",
      key: member.key,
    });
    expect(removed.status).toBe(404);
    const badName = await system.request("/v1/connections/Not%20A%20Name", {
      method: "POST",
      key: member.key,
    });
    expect(badName.status).toBe(400);
    for (const path of [
      "/connect/nope?ticket=abcdefghijklmnopqrstuvwxyz",
      "/connect/nope/callback",
    ]) {
      const page = await fetch(`${base}${path}`, { redirect: "manual" });
      expect(page.status).toBe(404);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(await page.text()).toContain("no provider named nope");
    }
  });
});

describe("who sees and removes connections", () => {
  it("lets an admin list everyone's and disconnect one, revoked at the provider and audited", async () => {
    const grace = await principal("member");
    const page = await new Browser().authorize((await linkFor(grace)).url, "grace");
    expect(page.status).toBe(200);

    const admin = { key: system.adminKey, keyId: "admin-bootstrap" };
    const all = await connectionsOf(admin, "?all=true");
    expect(all.status).toBe(200);
    expect((all.body as { connections: { principalId: string }[] }).connections).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ principalId: grace.keyId, provider: "github" }),
      ]),
    );
    expect(keysIn(all.body).filter((key) => /token|sealed|secret/i.test(key))).toEqual([]);
    const hers = await connectionsOf(admin, `?principal=${grace.keyId}`);
    expect(hers.body).toMatchObject({ connections: [{ provider: "github", status: "connected" }] });

    const tokens = await storedTokens(grace.keyId, "github");
    expect(await upstreamMe(tokens.accessToken)).toEqual({ status: 200, login: "grace" });

    const removed = await system.request(`/v1/connections/github?principal=${grace.keyId}`, {
      method: "DELETE",
    });
    expect(removed.status).toBe(200);
    // The provider's revocation endpoint took the refresh token, and the grant died with it:
    // the access token Toolbus held no longer works there.
    expect(await removed.json()).toEqual({ removed: true, revoked: true });
    expect(await upstreamMe(tokens.accessToken)).toEqual({ status: 401 });
    expect((await connectionsOf(grace)).body).toEqual({ connections: [] });
    expect((await connectionsOf(admin, `?principal=${grace.keyId}`)).body).toEqual({
      connections: [],
    });
    const again = await system.request(`/v1/connections/github?principal=${grace.keyId}`, {
      method: "DELETE",
    });
    expect(again.status).toBe(404);

    const audit = await system.request("/v1/audit");
    const entries = ((await audit.json()) as { entries: Record<string, unknown>[] }).entries;
    expect(entries).toContainEqual(
      expect.objectContaining({
        action: "DELETE",
        target: "/v1/connections/github",
        object: { kind: "connection", id: `${grace.keyId}:github` },
        status: 200,
      }),
    );
  });

  it("lets a person disconnect their own", async () => {
    const heidi = await principal("member");
    await new Browser().authorize((await linkFor(heidi)).url, "heidi");
    const removed = await system.request("/v1/connections/github", {
      method: "DELETE",
      key: heidi.key,
    });
    expect(removed.status).toBe(200);
    expect(await removed.json()).toEqual({ removed: true, revoked: true });
    expect((await connectionsOf(heidi)).body).toEqual({ connections: [] });
    const nothing = await system.request("/v1/connections/github", {
      method: "DELETE",
      key: heidi.key,
    });
    expect(nothing.status).toBe(404);
  });

  it("keeps members and viewers to their own", async () => {
    const ivan = await principal("member");
    await new Browser().authorize((await linkFor(ivan)).url, "ivan");
    for (const role of ["member", "viewer"]) {
      const other = await principal(role);
      expect((await connectionsOf(other)).status).toBe(200);
      expect((await connectionsOf(other, `?principal=${ivan.keyId}`)).status).toBe(403);
      expect((await connectionsOf(other, "?all=true")).status).toBe(403);
      const removed = await system.request(`/v1/connections/github?principal=${ivan.keyId}`, {
        method: "DELETE",
        key: other.key,
      });
      expect(removed.status).toBe(403);
    }
    // A viewer may connect its own (read).
    const viewer = await principal("viewer");
    expect((await linkFor(viewer)).url).toContain("/connect/github?ticket=");
    expect((await connectionsOf(ivan)).body).toMatchObject({
      connections: [{ provider: "github", status: "connected" }],
    });
    // Reading one's own by id is fine.
    expect((await connectionsOf(ivan, `?principal=${ivan.keyId}`)).status).toBe(200);
    expect((await system.request("/v1/connections", { key: null })).status).toBe(401);
  });
});

describe("the typed client and the command line", () => {
  async function toolbus(argv: string[], key: string) {
    let stdout = "";
    let stderr = "";
    const code = await runCli([...argv, "--endpoint", base], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: (async function* () {})(),
      env: { TOOLBUS_API_KEY: key },
      cwd: keyDir,
      fetch: (input, init) => fetch(input, init),
    });
    return { code, stdout, stderr };
  }

  it("connects, lists and disconnects through the client", async () => {
    const judy = await principal("member");
    const client = createToolbusClient({ baseUrl: base, apiKey: judy.key });
    expect(await client.connections.providers()).toEqual([
      { name: "github", scopes: ["read"], connected: false },
      { name: "acme", scopes: ["read"], connected: false },
    ]);
    const link = await client.connections.link("github", { scopes: ["read", "write"] });
    const page = await new Browser().authorize(link.url, "judy");
    expect(page.status).toBe(200);
    const [connection] = await client.connections.list();
    expect(connection).toMatchObject({ principalId: judy.keyId, provider: "github" });
    expect(connection?.scopes).toEqual(expect.arrayContaining(["read", "write"]));
    const admin = createToolbusClient({ baseUrl: base, apiKey: system.adminKey });
    expect(await admin.connections.list({ principal: judy.keyId })).toHaveLength(1);
    expect(await client.connections.disconnect("github")).toEqual({ removed: true, revoked: true });
    await expect(client.connections.disconnect("github")).rejects.toMatchObject({ status: 404 });
  });

  it("prints a connect link, the providers and the connections, and disconnects", async () => {
    const kim = await principal("member");
    const connect = await toolbus(["connections", "connect", "github"], kim.key);
    expect(connect, connect.stderr).toMatchObject({ code: 0, stderr: "" });
    const url = /^(http\S+)$/m.exec(connect.stdout)?.[1] ?? "";
    expect(url).toContain(`${base}/connect/github?ticket=`);
    expect((await new Browser().authorize(url, "kim")).status).toBe(200);

    const providers = await toolbus(["connections", "providers"], kim.key);
    expect(providers.stdout).toMatch(/github\s+read\s+yes/);
    expect(providers.stdout).toMatch(/acme\s+read\s+no/);
    const mine = await toolbus(["connections", "list", "--json"], kim.key);
    expect(JSON.parse(mine.stdout)).toMatchObject([{ provider: "github", status: "connected" }]);
    const others = await toolbus(["connections", "list", "--principal", "someone-else"], kim.key);
    expect(others.code).not.toBe(0);

    const removed = await toolbus(
      ["connections", "disconnect", "github", "--principal", kim.keyId],
      system.adminKey,
    );
    expect(removed, removed.stderr).toMatchObject({ code: 0 });
    expect(removed.stdout).toContain(`Disconnected github for ${kim.keyId}; the provider revoked`);
    const none = await toolbus(["connections", "list"], kim.key);
    expect(none.stdout).toContain("No connected accounts");
  });
});

describe("a stage served over https", () => {
  let https: TestToolbus;
  beforeAll(async () => {
    https = await startTestToolbus({
      config: {
        connections: {
          publicUrl: "https://toolbus.example.com",
          providers: { github: { clientId: "Iv1.toolbus", clientSecret: "GITHUB_OAUTH_SECRET" } },
        },
      },
    });
  }, 60_000);
  afterAll(() => https?.stop(), 60_000);

  it("sends GitHub's own authorize page and a Secure cookie", async () => {
    const created = await https.request("/v1/connections/github", { method: "POST" });
    expect(created.status).toBe(201);
    const { url } = (await created.json()) as { url: string };
    expect(url).toMatch(/^https:\/\/toolbus\.example\.com\/connect\/github\?ticket=/);
    const link = new URL(url);
    const response = await https.request(`${link.pathname}${link.search}`, { key: null });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(
      "https://github.com/login/oauth/authorize",
    );
    expect(location.searchParams.get("client_id")).toBe("Iv1.toolbus");
    expect(location.searchParams.get("redirect_uri")).toBe(
      "https://toolbus.example.com/connect/github/callback",
    );
    expect(response.headers.getSetCookie()[0]?.split("; ")).toContain("Secure");
  });

  it("leaves /connect and /v1/connections to the API, not the streaming endpoint", async () => {
    const streaming = createApi({ ...https.toolbus.apiDeps, surface: "streaming" });
    for (const path of ["/connect/github?ticket=abcdefghijklmnopqrstuvwxyz", "/v1/connections"]) {
      const response = await streaming.request(path, {
        headers: { authorization: `Bearer ${https.adminKey}` },
      });
      expect(response.status).toBe(404);
    }
  });
});
