import {
  type OAuthClientProvider,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { parseStageConfig } from "@toolbus/core/config";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runToolbusCli } from "./support/cli";
import {
  authorizeThroughPages,
  type CognitoShapedIssuer,
  MCP_CLIENT_ID,
  type OidcIssuer,
  REDIRECT_URI,
  startCognitoShapedIssuer,
  startOidcIssuer,
  TOOLBUS_SCOPE,
} from "./support/oidc-issuer";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const TEXT = "The cat sat on the mat. It was happy.";
const COGNITO_CLIENT = "app-client-1";
const COGNITO_SCOPE = "toolbus/mcp";
const COGNITO_RESOURCE = "https://toolbus.example.com/mcp";

/** A stage signing people in with oidc-provider, served on loopback for the MCP client. */
let standard: TestToolbus;
let api: ApiServer;
let resource: string;
let oidc: OidcIssuer;
/** A stage whose issuer mints tokens as Cognito does (no `aud`). */
let cognitoStage: TestToolbus;
let cognito: CognitoShapedIssuer;
/** A stage of API keys alone. */
let plain: TestToolbus;
/** A registered API's server, recording what reaches it. */
let upstream: Upstream;

beforeAll(async () => {
  // The resource's URL is in the stage's configuration, so the port comes first: the server
  // answers through `standard` once it is started.
  api = await serveApi({ fetch: (request) => standard.app.fetch(request) }, { port: 0 });
  resource = `${api.url}/mcp`;
  oidc = await startOidcIssuer({
    resource,
    groups: {
      alice: ["toolbus-members"],
      root: ["toolbus-admins", "toolbus-members"],
      nobody: ["elsewhere"],
    },
  });
  cognito = await startCognitoShapedIssuer();
  upstream = await startUpstream(async (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ echoed: true }));
  });
  const upstreamPort = Number(new URL(upstream.origin).port);
  [standard, cognitoStage, plain] = await Promise.all([
    startTestToolbus({
      config: {
        outbound: {
          allowHosts: ["127.0.0.1"],
          networkProbe: { host: "127.0.0.1", port: upstreamPort },
        },
        auth: {
          oauth: {
            issuer: oidc.issuer,
            resource,
            roles: {
              claim: "groups",
              map: { "toolbus-members": "member", "toolbus-admins": "admin" },
            },
            scopesSupported: [TOOLBUS_SCOPE],
            clockToleranceSeconds: 0,
          },
        },
      },
    }),
    startTestToolbus({
      config: {
        auth: {
          oauth: {
            issuer: cognito.issuer,
            resource: COGNITO_RESOURCE,
            clientIds: [COGNITO_CLIENT],
            requiredScope: COGNITO_SCOPE,
            roles: { claim: "cognito:groups", map: { members: "member" } },
          },
        },
      },
    }),
    startTestToolbus(),
  ]);
});

afterAll(async () => {
  await api?.close();
  await Promise.all([standard?.stop(), cognitoStage?.stop(), plain?.stop()]);
  await Promise.all([oidc?.close(), cognito?.close(), upstream?.close()]);
});

const metadataUrl = () => `${api.url}/.well-known/oauth-protected-resource/mcp`;

function callOverRest(system: TestToolbus, token: string, runId: string, callId: string) {
  return system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    key: token,
    json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait: 10 },
  });
}

async function requestedBy(system: TestToolbus, runId: string, callId: string) {
  await system.settle();
  const response = await system.request(`/v1/runs/${runId}/calls/${callId}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { requestedBy: Record<string, unknown> }).requestedBy;
}

async function expectRefusedToken(response: Response) {
  expect(response.status).toBe(401);
  const challenge = response.headers.get("www-authenticate") ?? "";
  expect(challenge).toMatch(/^Bearer /);
  expect(challenge).toContain('error="invalid_token"');
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
}

/** A token's payload with one claim changed, the signature left as it was. */
function tampered(token: string, claims: Record<string, unknown>): string {
  const [header, payload, signature] = token.split(".") as [string, string, string];
  const changed = { ...JSON.parse(Buffer.from(payload, "base64url").toString()), ...claims };
  return `${header}.${Buffer.from(JSON.stringify(changed)).toString("base64url")}.${signature}`;
}

describe("protected resource metadata", () => {
  it("tells a client where to sign in, at the path-suffixed and the root well-known URL", async () => {
    for (const url of [metadataUrl(), `${api.url}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource,
        authorization_servers: [oidc.issuer],
        scopes_supported: [TOOLBUS_SCOPE],
        bearer_methods_supported: ["header"],
        resource_name: "Toolbus (local)",
      });
    }
  });

  it("is absent on a stage without OAuth", async () => {
    const response = await plain.request("/.well-known/oauth-protected-resource", { key: null });
    expect(response.status).toBe(404);
  });
});

describe("refusals", () => {
  it("answers 401 with the metadata's URL and scope to a request without credentials, on /mcp and REST alike", async () => {
    const expected = `Bearer resource_metadata="${metadataUrl()}", scope="${TOOLBUS_SCOPE}"`;
    const mcp = await fetch(resource, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toBe(expected);
    const rest = await fetch(`${api.url}/v1/tools`);
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")).toBe(expected);
  });

  it("keeps the bare Bearer challenge on a stage without OAuth, and treats a JWT there as an unknown key", async () => {
    const token = await oidc.signIn("alice");
    const response = await plain.request("/v1/tools", { key: token });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("refuses an expired token", async () => {
    oidc.setAccessTokenTtl(1);
    const token = await oidc.signIn("alice").finally(() => oidc.setAccessTokenTtl(300));
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const response = await standard.request("/v1/tools", { key: token });
    await expectRefusedToken(response);
  });

  it("refuses a token issued for another resource (RFC 8707 audience)", async () => {
    const token = await oidc.signIn("alice", { resource: "https://other.example.com/api" });
    await expectRefusedToken(await standard.request("/v1/tools", { key: token }));
  });

  it("refuses a token whose payload was changed after signing", async () => {
    const token = await oidc.signIn("alice");
    const forged = tampered(token, { groups: ["toolbus-admins"] });
    await expectRefusedToken(await standard.request("/v1/keys", { key: forged }));
  });

  it("refuses another issuer's token, even one signed with the configured issuer's key", async () => {
    const foreign = await cognito.mint({ sub: "alice", client_id: COGNITO_CLIENT });
    await expectRefusedToken(await standard.request("/v1/tools", { key: foreign }));
    const wrongIss = await cognito.mint({
      sub: "alice",
      client_id: COGNITO_CLIENT,
      scope: COGNITO_SCOPE,
      "cognito:groups": ["members"],
      iss: "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other",
    });
    await expectRefusedToken(await cognitoStage.request("/v1/tools", { key: wrongIss }));
  });

  it("answers 503, not 401, while the issuer's keys cannot be read", async () => {
    const unreachable = await startTestToolbus({
      config: {
        auth: {
          oauth: {
            // Nothing listens on port 1: discovery fails as an issuer that is down does.
            issuer: "http://127.0.0.1:1",
            resource,
            roles: { claim: "groups", map: { "toolbus-members": "member" } },
          },
        },
      },
    });
    try {
      const response = await unreachable.request("/v1/tools", { key: await oidc.signIn("alice") });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
    } finally {
      await unreachable.stop();
    }
  });

  it("answers 403 insufficient_scope to a valid token whose claims map to no role", async () => {
    const token = await oidc.signIn("nobody");
    const response = await standard.request("/v1/tools", { key: token });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "insufficient_scope",
    );
  });

  it("answers 403 insufficient_scope when the token's role is below what the route needs", async () => {
    const token = await oidc.signIn("alice");
    const response = await standard.request("/v1/keys", { key: token });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });
});

describe("signed-in callers", () => {
  it("call a tool over REST as themselves, the same principal across tokens", async () => {
    const runId = standard.runId();
    const first = await callOverRest(standard, await oidc.signIn("alice"), runId, "first");
    expect(first.status).toBe(200);
    const second = await callOverRest(standard, await oidc.signIn("alice"), runId, "second");
    expect(second.status).toBe(200);
    const one = await requestedBy(standard, runId, "first");
    const two = await requestedBy(standard, runId, "second");
    expect(one).toEqual({
      id: expect.stringMatching(/^oauth:[0-9a-f]{32}$/),
      role: "member",
      issuer: oidc.issuer,
      subject: "alice",
    });
    expect(two).toEqual(one);
    const other = await callOverRest(standard, await oidc.signIn("root"), runId, "third");
    expect(other.status).toBe(200);
    const root = await requestedBy(standard, runId, "third");
    expect(root).toMatchObject({ role: "admin", subject: "root" });
    expect(root.id).not.toBe(one.id);
  });

  it("call a tool over /mcp with the official SDK client, recorded as the same person", async () => {
    const runId = standard.runId();
    const client = new Client({ name: "oauth-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(resource), {
      requestInit: {
        headers: {
          authorization: `Bearer ${await oidc.signIn("alice")}`,
          "X-Toolbus-Run-Id": runId,
        },
      },
    });
    await client.connect(transport);
    try {
      const result = (await client.callTool({
        name: "readability_analyzer",
        arguments: { text: TEXT },
        _meta: { "toolbus/callId": "over-mcp" },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const byMcp = await requestedBy(standard, runId, "over-mcp");
    const restRun = standard.runId();
    await callOverRest(standard, await oidc.signIn("alice"), restRun, "over-rest");
    expect(byMcp).toEqual(await requestedBy(standard, restRun, "over-rest"));
    expect(byMcp).toMatchObject({ subject: "alice", role: "member" });
  });

  it("never pass their token on to the tool's upstream", async () => {
    const registered = await standard.request("/v1/registered-toolsets/echoes", {
      method: "PUT",
      json: {
        kind: "http",
        name: "echoes",
        description: "An API that answers whatever it is asked",
        owner: "team-oauth",
        tools: [
          {
            id: "echo_get",
            title: "Echo",
            description: "Answers that it was called.",
            category: "utility",
            usageHint: "Only in tests.",
            url: `${upstream.origin}/echo`,
            availability: { minRole: "member" },
            inputSchema: { type: "object" },
            outputSchema: { type: "object" },
          },
        ],
      },
    });
    expect(registered.status).toBe(201);
    const token = await oidc.signIn("alice");
    const runId = standard.runId();
    const response = await standard.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      key: token,
      json: { tool: "echo_get", input: {}, callId: "echo", wait: 10 },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("succeeded");
    expect(upstream.requests.length).toBeGreaterThan(0);
    for (const request of upstream.requests) {
      expect(request.headers.authorization).toBeUndefined();
      expect(JSON.stringify(request.headers)).not.toContain(token.split(".")[2]);
    }
  });

  it("keep API keys working beside tokens", async () => {
    const created = await standard.request("/v1/keys", {
      method: "POST",
      json: { name: "backend", role: "member" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    const runId = standard.runId();
    expect((await callOverRest(standard, key, runId, "by-key")).status).toBe(200);
    expect(await requestedBy(standard, runId, "by-key")).toEqual({ id: keyId, role: "member" });
    const refused = await standard.request("/v1/tools", { key: "tbk_0000000000000000_not-a-key" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("Cognito-shaped tokens (client_id, no aud)", () => {
  const valid = { sub: "c-alice", client_id: COGNITO_CLIENT, scope: `openid ${COGNITO_SCOPE}` };

  it("accept a listed client's access token with the required scope, role from cognito:groups", async () => {
    const token = await cognito.mint({ ...valid, "cognito:groups": ["members"] });
    const runId = cognitoStage.runId();
    expect((await callOverRest(cognitoStage, token, runId, "cognito")).status).toBe(200);
    expect(await requestedBy(cognitoStage, runId, "cognito")).toMatchObject({
      id: expect.stringMatching(/^oauth:/),
      role: "member",
      issuer: cognito.issuer,
      subject: "c-alice",
    });
  });

  it("refuse an unlisted client id, an ID token, a missing scope and an unknown key", async () => {
    const groups = { "cognito:groups": ["members"] };
    const refused = [
      await cognito.mint({ ...valid, ...groups, client_id: "someone-else" }),
      await cognito.mint({ ...valid, ...groups, token_use: "id", aud: COGNITO_CLIENT }),
      await cognito.mint({ ...valid, ...groups, scope: "openid" }),
      await cognito.mint({ ...valid, ...groups }, { signWith: "stranger" }),
      await cognito.mint({ ...valid, ...groups }, { expiresInSeconds: -120 }),
    ];
    for (const token of refused) {
      await expectRefusedToken(await cognitoStage.request("/v1/tools", { key: token }));
    }
  });

  it("answer 403 to a token in no mapped group, naming the required scope", async () => {
    const token = await cognito.mint({ ...valid, "cognito:groups": ["visitors"] });
    const response = await cognitoStage.request("/v1/tools", { key: token });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", error_description="The access token is valid but grants no Toolbus role: an administrator maps its claims to roles (auth.oauth.roles).", resource_metadata="https://toolbus.example.com/.well-known/oauth-protected-resource/mcp", scope="${COGNITO_SCOPE}"`,
    );
  });
});

describe("auth.oauth configuration", () => {
  const oauth = {
    issuer: "https://issuer.example.com",
    resource: "https://toolbus.example.com/mcp",
    roles: { claim: "groups", map: { devs: "member" } },
  };

  it("accepts a minimal configuration and fills in the leeway", () => {
    expect(parseStageConfig({ auth: { oauth } }).auth?.oauth).toMatchObject({
      ...oauth,
      clockToleranceSeconds: 30,
    });
  });

  it("refuses unknown keys, unknown roles and issuers in the clear", () => {
    expect(() => parseStageConfig({ auth: { oauth: { ...oauth, audiance: ["x"] } } })).toThrow(
      /auth\.oauth\.audiance: unknown field; did you mean "audience"\?/,
    );
    expect(() =>
      parseStageConfig({
        auth: { oauth: { ...oauth, roles: { claim: "g", map: { a: "boss" } } } },
      }),
    ).toThrow(/auth\.oauth\.roles\.map\.a: "boss" is not one of roles/);
    expect(() =>
      parseStageConfig({ auth: { oauth: { ...oauth, issuer: "http://issuer.example.com" } } }),
    ).toThrow(/auth\.oauth\.issuer: expected an https URL/);
  });
});

describe("keys that act for end users", () => {
  async function createKey(system: TestToolbus, name: string, actsFor?: boolean) {
    const response = await system.request("/v1/keys", {
      method: "POST",
      json: { name, role: "member", ...(actsFor === undefined ? {} : { actsFor }) },
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { key: string; keyId: string; actsFor?: boolean };
  }

  function callFor(key: string, runId: string, callId: string, headers: Record<string, string>) {
    return plain.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      key,
      headers,
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait: 10 },
    });
  }

  it("record the end user a backend names, prefixed with its key, so two backends' users never meet", async () => {
    const first = await createKey(plain, "backend-a", true);
    const second = await createKey(plain, "backend-b", true);
    expect(first.actsFor).toBe(true);
    const listed = (await (await plain.request("/v1/keys")).json()) as {
      keys: Array<{ keyId: string; actsFor?: boolean }>;
    };
    expect(listed.keys.find((k) => k.keyId === first.keyId)?.actsFor).toBe(true);

    const runId = plain.runId();
    const user = { "X-Toolbus-On-Behalf-Of": "user-42" };
    expect((await callFor(first.key, runId, "a", user)).status).toBe(200);
    expect((await callFor(second.key, runId, "b", user)).status).toBe(200);
    const a = await requestedBy(plain, runId, "a");
    expect(a).toEqual({
      id: `${first.keyId}:user:user-42`,
      role: "member",
      subject: "user-42",
      actingKeyId: first.keyId,
    });
    expect((await requestedBy(plain, runId, "b")).id).toBe(`${second.keyId}:user:user-42`);
  });

  it("give the end user the key's role or a lower one the request names, never a higher one", async () => {
    const backend = await createKey(plain, "backend-roles", true);
    const runId = plain.runId();
    const asViewer = await callFor(backend.key, runId, "viewer", {
      "X-Toolbus-On-Behalf-Of": "u1",
      "X-Toolbus-On-Behalf-Of-Role": "viewer",
    });
    expect(asViewer.status).toBe(403);
    const asAdmin = await callFor(backend.key, runId, "admin", {
      "X-Toolbus-On-Behalf-Of": "u1",
      "X-Toolbus-On-Behalf-Of-Role": "admin",
    });
    expect(asAdmin.status).toBe(403);
    const badId = await callFor(backend.key, runId, "bad", { "X-Toolbus-On-Behalf-Of": "#x/y" });
    expect(badId.status).toBe(400);
  });

  it("are created with `toolbus keys create --acts-for`", async () => {
    const { code, stdout } = await runToolbusCli(
      api.url,
      ["keys", "create", "--name", "cli-backend", "--role", "member", "--acts-for", "--json"],
      standard.adminKey,
    );
    expect(code).toBe(0);
    const created = JSON.parse(stdout) as { keyId: string; actsFor?: boolean };
    expect(created.actsFor).toBe(true);
  });

  it("refuse the header from any credential not created to act for end users", async () => {
    const ordinary = await createKey(plain, "ordinary");
    const headers = { "X-Toolbus-On-Behalf-Of": "user-42" };
    const runId = plain.runId();
    expect((await callFor(ordinary.key, runId, "ordinary", headers)).status).toBe(403);
    expect((await callFor(plain.adminKey, runId, "bootstrap", headers)).status).toBe(403);
    const token = await oidc.signIn("alice");
    const byToken = await standard.request("/v1/tools", { key: token, headers });
    expect(byToken.status).toBe(403);
  });
});

describe("an MCP client signing in by itself", () => {
  it("finds the issuer from the 401, signs the person in, and calls a tool with the token", async () => {
    let authorizationUrl: URL | undefined;
    let verifier = "";
    let tokens: OAuthTokens | undefined;
    // A client with a client id given to it (no dynamic registration, as with Cognito).
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT_URI,
      clientMetadata: {
        client_name: "oauth-test",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      clientInformation: () => ({ client_id: MCP_CLIENT_ID }),
      tokens: () => tokens,
      saveTokens: (saved) => {
        tokens = saved;
      },
      redirectToAuthorization: (url) => {
        authorizationUrl = url;
      },
      saveCodeVerifier: (saved) => {
        verifier = saved;
      },
      codeVerifier: () => verifier,
    };

    const first = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
    await expect(
      new Client({ name: "oauth-flow", version: "1.0.0" }).connect(first),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    expect(authorizationUrl?.href.startsWith(`${oidc.issuer}/auth?`)).toBe(true);
    expect(authorizationUrl?.searchParams.get("resource")).toBe(resource);
    await first.finishAuth(await authorizeThroughPages(String(authorizationUrl), "alice"));
    expect(tokens?.access_token).toEqual(expect.any(String));

    const runId = standard.runId();
    const client = new Client({ name: "oauth-flow", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(resource), {
        authProvider: provider,
        requestInit: { headers: { "X-Toolbus-Run-Id": runId } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: "readability_analyzer",
        arguments: { text: TEXT },
        _meta: { "toolbus/callId": "signed-in" },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(await requestedBy(standard, runId, "signed-in")).toMatchObject({
      subject: "alice",
      issuer: oidc.issuer,
      role: "member",
    });
  });
});
