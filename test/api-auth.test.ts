import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
let viewerKey: string;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus();
  viewerKey = (await createKey("reader", "viewer")).key;
  memberKey = (await createKey("agent", "member")).key;
});
afterAll(() => system.stop());

async function createKey(name: string, role: string) {
  const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; keyId: string; role: string };
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("server")).toBeNull();
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack/);
  const body = JSON.parse(text) as { error: { code: string; message: string; details?: unknown } };
  expect(body.error.code).toBe(code);
  return body.error;
}

/** Nothing was recorded or announced for the call. */
async function expectNothingWritten(runId: string, callId: string) {
  await system.settle();
  expect((await system.request(`/v1/runs/${runId}/calls/${callId}`)).status).toBe(404);
  const events = await system.request(`/v1/runs/${runId}/events`);
  expect(((await events.json()) as { events: unknown[] }).events).toEqual([]);
}

const call = (callId: string) => ({
  tool: "readability_analyzer",
  input: { text: "The cat sat." },
  callId,
  wait: 10,
});

describe("authentication", () => {
  it("rejects a request without a key with 401 and a Bearer challenge", async () => {
    const response = await system.request("/v1/tools", { key: null });
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    await expectError(response, 401, "unauthorized");
  });

  it("rejects a header that is not a bearer token", async () => {
    const response = await system.request("/v1/tools", {
      key: null,
      headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` },
    });
    await expectError(response, 401, "unauthorized");
  });

  it("rejects an unknown key, without echoing it", async () => {
    const response = await system.request("/v1/tools", { key: "tbk_0000000000000000_not-a-key" });
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
    const error = await expectError(response, 401, "unauthorized");
    expect(JSON.stringify(error)).not.toContain("not-a-key");
  });

  it("accepts the admin bootstrap key and records calls under admin-bootstrap", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: call("by-admin"),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      requestedBy: { id: "admin-bootstrap", role: "admin" },
    });
  });

  it("stops accepting a key once it is revoked", async () => {
    const created = await createKey("temporary", "viewer");
    expect((await system.request("/v1/tools", { key: created.key })).status).toBe(200);

    const revoked = await system.request(`/v1/keys/${created.keyId}`, { method: "DELETE" });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({
      keyId: created.keyId,
      revokedAt: expect.any(String),
    });
    const response = await system.request("/v1/tools", { key: created.key });
    await expectError(response, 401, "unauthorized");
  });
});

describe("roles", () => {
  it("lets a viewer read the catalog but not call tools, and writes nothing", async () => {
    expect((await system.request("/v1/tools", { key: viewerKey })).status).toBe(200);
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      key: viewerKey,
      json: call("by-viewer"),
    });
    const error = await expectError(response, 403, "forbidden");
    expect(error.message).toContain("member");
    expect(error.details).toEqual({ requiredRole: "member" });
    await expectNothingWritten(runId, "by-viewer");
  });

  it("lets a member call tools and read results, as itself", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      key: memberKey,
      json: call("by-member"),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      status: "succeeded",
      requestedBy: { role: "member" },
    });
    const read = await system.request(`/v1/runs/${runId}/calls/by-member`, { key: viewerKey });
    expect(read.status).toBe(200);
  });

  it("keeps admin routes from members and viewers with 403 naming the admin role", async () => {
    const attempts: [string, RequestInit & { json?: unknown }][] = [
      ["/v1/keys", { method: "POST", json: { name: "x", role: "admin" } }],
      ["/v1/keys", { method: "GET" }],
      ["/v1/keys/0123456789abcdef", { method: "DELETE" }],
      [
        "/v1/toolsets/sneaky",
        { method: "PUT", json: { name: "sneaky", description: "d", owner: "o" } },
      ],
      ["/v1/tools/readability_analyzer/disable", { method: "POST" }],
      ["/v1/tools/readability_analyzer", { method: "PUT", json: {} }],
    ];
    for (const key of [memberKey, viewerKey]) {
      for (const [path, init] of attempts) {
        const error = await expectError(
          await system.request(path, { ...init, key }),
          403,
          "forbidden",
        );
        expect(error.message).toContain("admin");
      }
    }
    const toolset = await system.request("/v1/toolsets/sneaky");
    expect(toolset.status).toBe(404);
    const tool = (await (await system.request("/v1/tools/readability_analyzer")).json()) as {
      availability: { enabled: boolean };
    };
    expect(tool.availability.enabled).toBe(true);
  });
});

describe("API keys", () => {
  it("shows a new key once, and lists records without keys or hashes", async () => {
    const response = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "ci", role: "member" },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const created = (await response.json()) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(["createdAt", "key", "keyId", "name", "role"]);
    expect(response.headers.get("location")).toBe(`/v1/keys/${created.keyId}`);

    const list = await system.request("/v1/keys");
    expect(list.status).toBe(200);
    const text = await list.text();
    expect(text).not.toContain(created.key as string);
    const { keys } = JSON.parse(text) as { keys: Record<string, unknown>[] };
    const record = keys.find((k) => k.keyId === created.keyId);
    expect(record).toEqual({
      keyId: created.keyId,
      name: "ci",
      role: "member",
      createdAt: created.createdAt,
    });
    for (const item of keys) {
      expect(
        Object.keys(item).every((field) =>
          ["keyId", "name", "role", "createdAt", "revokedAt", "lastUsedAt"].includes(field),
        ),
      ).toBe(true);
    }
  });

  it("rejects a role the stage does not define, and unknown fields", async () => {
    const role = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "x", role: "superuser" },
    });
    const error = await expectError(role, 400, "invalid_request");
    expect(error.details).toEqual([{ path: "role", message: expect.stringContaining("viewer") }]);

    const extra = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "x", role: "viewer", key: "chosen" },
    });
    const extraError = await expectError(extra, 400, "invalid_request");
    expect(extraError.details).toEqual([{ path: "key", message: expect.any(String) }]);
  });

  it("answers 404 for revoking an unknown key and 400 for an id that cannot exist", async () => {
    await expectError(
      await system.request("/v1/keys/0123456789abcdef", { method: "DELETE" }),
      404,
      "not_found",
    );
    await expectError(
      await system.request("/v1/keys/bad%20id", { method: "DELETE" }),
      400,
      "invalid_request",
    );
  });
});
