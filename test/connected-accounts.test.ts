import { mkdtemp, rm, stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import type { ConnectionsConfig } from "@toolbus/core/connections/config";
import { localKeyFile } from "@toolbus/core/connections/envelope";
import { ConnectionService } from "@toolbus/core/connections/service";
import { createHttpClient } from "@toolbus/core/outbound";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../packages/core/src/store/dynamodb/client";
import { DynamoConnectionStore } from "../packages/core/src/store/dynamodb/connections";
import { Browser } from "./support/browser";
import { testDynamoDbClient } from "./support/dynamodb";
import { type OAuthUpstream, providerConfig, startOAuthUpstream } from "./support/oauth-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// github_api acting as each caller: a real OAuth server (oidc-provider) is the provider, a
// GitHub-shaped API on loopback asks it whose token each request carries, and people connect
// through Toolbus's /connect pages in a cookie-keeping browser.

let upstream: OAuthUpstream;
let github: Server;
let githubUrl: string;
let system: TestToolbus;
let server: ApiServer;
let publicUrl: string;
let keyDir: string;
const keys: Record<string, string> = {};
/** Each person's principal id: their key's id. */
const keyIds: Record<string, string> = {};
/** Whose token each GitHub request carried, as the provider says. */
const seenBy: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  upstream = await startOAuthUpstream({
    scopes: ["repo"],
    accessTokenTtl: 300,
    redirectUris: [`${publicUrl}/connect/github/callback`],
  });
  github = createServer(async (req, res) => {
    const who = await fetch(upstream.apiUrl, {
      headers: { authorization: req.headers.authorization ?? "" },
    });
    if (who.status !== 200) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: "Bad credentials" }));
      return;
    }
    const { login } = (await who.json()) as { login: string };
    seenBy.push(login);
    const number = Number(req.url?.split("/").pop());
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        number,
        title: `Read by ${login}`,
        state: "open",
        state_reason: null,
        html_url: `https://github.com/acme/app/issues/${number}`,
        user: { login: "someone" },
        labels: [],
        comments: 0,
        created_at: "2026-11-01T00:00:00Z",
        updated_at: "2026-11-02T00:00:00Z",
        closed_at: null,
        body: "A bug.",
      }),
    );
  });
  await new Promise<void>((resolve) => github.listen(0, "127.0.0.1", resolve));
  githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;

  keyDir = await mkdtemp(join(tmpdir(), "toolbus-connections-"));
  process.env.TOOLBUS_CONNECTION_KEY_FILE = join(keyDir, "connection-key");
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      connections: {
        publicUrl,
        providers: {
          github: providerConfig(upstream, "GITHUB_OAUTH_SECRET", ["repo"]),
        },
        credentials: { github_api: "user" },
      },
      tools: { github_api: { baseUrl: githubUrl } },
    },
    secrets: { GITHUB_OAUTH_SECRET: upstream.clientSecret },
  });
  server = await serveApi(system.app, { port });
  for (const name of ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]) {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name, role: "member" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    keys[name] = key;
    keyIds[name] = keyId;
  }
}, 60_000);

afterAll(async () => {
  await server?.close();
  await system?.stop();
  await upstream?.close();
  github?.close();
  delete process.env.TOOLBUS_CONNECTION_KEY_FILE;
  if (keyDir) await rm(keyDir, { recursive: true, force: true });
}, 60_000);

interface CallAnswer {
  status: string;
  result?: {
    output: string;
    data: { title?: string };
    failure?: {
      kind: string;
      retryable: boolean;
      recovery: string;
      connection?: { provider: string; scopes: string[]; reason: string; connectUrl?: string };
    };
  };
}

async function readIssue(who: string, number = 7): Promise<CallAnswer> {
  const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
    method: "POST",
    key: keys[who] ?? null,
    json: {
      tool: "github_api",
      input: { action: "get_issue", owner: "acme", repo: "app", number },
      wait: 20,
    },
  });
  const body = (await response.json()) as CallAnswer;
  expect(response.status).toBe(200);
  return body;
}

/** Opens a connect link as `login` in `browser`, through the provider's pages, to Toolbus's page. */
const connect = (browser: Browser, link: string, login: string) => browser.authorize(link, login);

describe("a tool acting as its caller", () => {
  it("tells a caller without a connection how to connect, and calls nothing upstream", async () => {
    const before = seenBy.length;
    const answer = await readIssue("alice");
    expect(answer.status).toBe("failed");
    const failure = answer.result?.failure;
    expect(failure).toMatchObject({
      kind: "connection_required",
      retryable: false,
      recovery: "replan",
      connection: { provider: "github", scopes: ["repo"], reason: "not_connected" },
    });
    expect(failure?.connection?.connectUrl).toMatch(
      new RegExp(`^${publicUrl}/connect/github\\?ticket=[A-Za-z0-9_-]{40,}$`),
    );
    expect(seenBy.length).toBe(before);
  });

  it("hands a caller retrying without a connection the link it was given, which still works", async () => {
    // Two at once, then one more: one ticket for the retries, the same link every time.
    const [first, meanwhile] = (await Promise.all([readIssue("heidi"), readIssue("heidi")])).map(
      (answer) => answer.result?.failure?.connection?.connectUrl,
    );
    const again = (await readIssue("heidi")).result?.failure?.connection?.connectUrl;
    expect(first).toMatch(/\?ticket=/);
    expect(meanwhile).toBe(first);
    expect(again).toBe(first);
    // Another person's failure gets a link of their own.
    const other = (await readIssue("dave")).result?.failure?.connection?.connectUrl;
    expect(other).toMatch(/\?ticket=/);
    expect(other).not.toBe(first);
    const page = await connect(new Browser(), again ?? "", "heidi");
    expect(page.status).toBe(200);
    expect((await readIssue("heidi")).result?.data.title).toBe("Read by heidi");
  });

  it("offers the tool, marked as needing the caller's connection", async () => {
    const response = await system.request("/v1/select", {
      method: "POST",
      key: keys.carol ?? null,
      json: {},
    });
    const selection = (await response.json()) as {
      tools: string[];
      needsConnection: { tool: string; provider: string }[];
    };
    expect(selection.tools).toContain("github_api");
    expect(selection.needsConnection).toContainEqual(
      expect.objectContaining({ tool: "github_api", provider: "github" }),
    );
  });

  it("acts as each person once they connect through the link their failed call gave", async () => {
    for (const who of ["alice", "bob"]) {
      const failed = await readIssue(who);
      const link = failed.result?.failure?.connection?.connectUrl ?? "";
      const page = await connect(new Browser(), link, who);
      expect(page.status).toBe(200);
      expect(page.body).toContain("connected");
    }
    const alice = await readIssue("alice");
    const bob = await readIssue("bob");
    expect(alice.result?.data.title).toBe("Read by alice");
    expect(bob.result?.data.title).toBe("Read by bob");
    // Nothing a caller sees carries a token.
    const listed = await system.request("/v1/connections", { key: keys.alice ?? null });
    const text = await listed.text();
    expect(JSON.parse(text)).toMatchObject({
      connections: [{ provider: "github", status: "connected", scopes: ["repo"] }],
    });
    expect(text).not.toMatch(/token/i);
  });

  it("refuses to finish a connection in a browser other than the one that started it", async () => {
    const failed = await readIssue("carol");
    const link = failed.result?.failure?.connection?.connectUrl ?? "";
    const carols = new Browser();
    // Carol goes through the provider's pages; the redirect back to Toolbus is not followed.
    const atCallback = await carols.authorize(link, "carol", {
      stopAt: (url) => url.pathname === "/connect/github/callback",
    });
    expect(atCallback.stopped).toBe(true);
    const mallory = new Browser();
    const refused = await mallory.open(atCallback.url);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/another browser/);
    // The state is spent: Carol's own browser cannot use it after that either.
    const late = await carols.open(atCallback.url);
    expect(late.status).toBe(400);
    expect((await readIssue("carol")).result?.failure?.kind).toBe("connection_required");
  });

  it("refreshes an expiring token once, however many calls need it at the same moment", async () => {
    const failed = await readIssue("carol");
    upstream.setAccessTokenTtl(30); // inside the minute Toolbus refreshes ahead of expiry
    await connect(new Browser(), failed.result?.failure?.connection?.connectUrl ?? "", "carol");
    upstream.setAccessTokenTtl(300);
    const refreshes = upstream.refreshCount();
    const answers = await Promise.all([1, 2, 3, 4].map((n) => readIssue("carol", n)));
    for (const answer of answers) expect(answer.result?.data.title).toBe("Read by carol");
    expect(upstream.refreshCount()).toBe(refreshes + 1);
    // The refreshed token lasts: the next call refreshes nothing.
    await readIssue("carol");
    expect(upstream.refreshCount()).toBe(refreshes + 1);
  });

  it("keeps the connection through a provider outage, and retries it as an upstream error", async () => {
    // Connected with a token inside the minute Toolbus refreshes ahead of expiry.
    upstream.setAccessTokenTtl(30);
    const link = await system.request("/v1/connections/github", {
      method: "POST",
      key: keys.frank ?? null,
    });
    expect(link.status).toBe(201);
    const { url } = (await link.json()) as { url: string };
    expect((await connect(new Browser(), url, "frank")).status).toBe(200);
    upstream.setAccessTokenTtl(300);
    upstream.failTokenEndpointOnce(503);
    const during = await readIssue("frank", 5);
    expect(during.result?.failure).toMatchObject({ kind: "upstream_error", retryable: true });
    const after = await readIssue("frank", 6);
    expect(after.result?.data.title).toBe("Read by frank");
  });

  it("marks the connection expired when the provider refuses the refresh, and asks to reconnect", async () => {
    upstream.setAccessTokenTtl(30);
    const link = await system.request("/v1/connections/github", {
      method: "POST",
      key: keys.grace ?? null,
    });
    const { url } = (await link.json()) as { url: string };
    expect((await connect(new Browser(), url, "grace")).status).toBe(200);
    upstream.setAccessTokenTtl(300);
    await upstream.revokeAll("grace");
    const answer = await readIssue("grace");
    expect(answer.result?.failure).toMatchObject({
      kind: "connection_required",
      connection: { provider: "github", reason: "expired" },
    });
    const listed = (await (
      await system.request("/v1/connections", { key: keys.grace ?? null })
    ).json()) as { connections: { status: string; reason?: string }[] };
    expect(listed.connections[0]).toMatchObject({ status: "expired" });
    expect(listed.connections[0]?.reason).toMatch(/invalid_grant/);
  });

  it("refuses an answer that names another issuer than the provider's", async () => {
    const failed = await readIssue("erin");
    upstream.setAuthorizationResponseIss("http://127.0.0.1:1/not-the-provider");
    try {
      const page = await connect(
        new Browser(),
        failed.result?.failure?.connection?.connectUrl ?? "",
        "erin",
      );
      expect(page.status).toBe(400);
      expect(page.body).toContain("not from github");
    } finally {
      upstream.setAuthorizationResponseIss(undefined);
    }
    expect((await readIssue("erin")).result?.failure?.kind).toBe("connection_required");
  });

  it("sends an MCP client that takes URL elicitation to connect, then runs the tool as its person", async () => {
    const asked: { mode?: string; url?: string }[] = [];
    const client = new ClientV2(
      { name: "connected-accounts-test", version: "1" },
      {
        capabilities: { elicitation: { url: {} } },
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode?: string; url?: string };
      asked.push(params);
      // The person opens the link in their browser and connects.
      if (params.mode === "url" && params.url) {
        expect((await connect(new Browser(), params.url, "dave")).status).toBe(200);
      }
      return { action: "accept" as const };
    });
    await client.connect(
      new TransportV2(new URL(`${publicUrl}/mcp`), {
        requestInit: {
          headers: { authorization: `Bearer ${keys.dave}`, "x-toolbus-run-id": system.runId() },
        },
      }),
    );
    try {
      const result = await client.callTool({
        name: "github_api",
        arguments: { action: "get_issue", owner: "acme", repo: "app", number: 3 },
      });
      expect(asked).toHaveLength(1);
      expect(asked[0]?.url).toMatch(new RegExp(`^${publicUrl}/connect/github\\?ticket=`));
      expect(result.isError).toBe(false);
      expect(JSON.stringify(result.structuredContent ?? result.content)).toContain("Read by dave");
    } finally {
      await client.close();
    }
  });

  it("reads a connection as expired, with why, when the key that sealed it is gone", async () => {
    const path = process.env.TOOLBUS_CONNECTION_KEY_FILE ?? "";
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const service = new ConnectionService({
      config: system.toolbus.apiDeps.config.connections as ConnectionsConfig,
      store: new DynamoConnectionStore({
        client: createDocumentClient(testDynamoDbClient()),
        tableName: system.tableName,
      }),
      keys: localKeyFile(join(keyDir, "moved-away")),
      http: createHttpClient({ ...system.toolbus.apiDeps.config.outbound }),
      secret: () => upstream.clientSecret,
    });
    const answer = await service.accessToken(
      { id: keyIds.alice ?? "", role: "member" },
      "github",
      [],
    );
    expect(answer).toMatchObject({
      ok: false,
      failure: { kind: "connection_required", connection: { reason: "expired" } },
    });
    expect(JSON.stringify(answer)).toMatch(/connection key file .* is missing/);
    const listed = await system.request("/v1/connections", { key: keys.alice ?? null });
    expect(
      ((await listed.json()) as { connections: { status: string }[] }).connections[0]?.status,
    ).toBe("expired");
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
