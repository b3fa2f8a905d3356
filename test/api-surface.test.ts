import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

/** Every error: the one JSON shape, no stack, no internal names, no server fingerprint. */
async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(response.headers.get("server")).toBeNull();
  expect(response.headers.get("x-powered-by")).toBeNull();
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack|Error\b/);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
  return body;
}

describe("the API's public surface", () => {
  it("answers /health without a key, with the stage and each dependency's state", async () => {
    const response = await system.request("/health", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      status: "ok",
      stage: "local",
      checkedAt: expect.any(String),
      dependencies: {
        dynamodb: { status: "ok", latencyMs: expect.any(Number) },
        eventbridge: { status: "ok", latencyMs: expect.any(Number) },
      },
    });
  });

  it("sends secure headers and no server fingerprint", async () => {
    const response = await system.request("/health", { key: null });
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("server")).toBeNull();
    expect(response.headers.get("x-powered-by")).toBeNull();
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("echoes a well-formed x-request-id and replaces a malformed one", async () => {
    const echoed = await system.request("/health", { headers: { "x-request-id": "req-42" } });
    expect(echoed.headers.get("x-request-id")).toBe("req-42");
    const replaced = await system.request("/health", {
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const generated = await system.request("/v1/nope");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers an unknown route with a JSON 404, and asks for a key first under /v1", async () => {
    await expectError(await system.request("/nope", { key: null }), 404, "not_found");
    await expectError(await system.request("/v1/nope"), 404, "not_found");
    await expectError(await system.request("/v1/nope", { key: null }), 401, "unauthorized");
    await expectError(await system.request("/health", { method: "DELETE" }), 404, "not_found");
  });

  it("publishes an OpenAPI 3.1 document with every route and bearer auth", async () => {
    const response = await system.request("/openapi.json", { key: null });
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
      security: unknown[];
    };
    expect(document.openapi).toBe("3.1.0");
    const routes = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      [
        "GET /health",
        "GET /v1/tools",
        "GET /v1/tools/{id}",
        "PUT /v1/tools/{id}",
        "POST /v1/tools/{id}/enable",
        "POST /v1/tools/{id}/disable",
        "PUT /v1/tools/{id}/availability",
        "GET /v1/toolsets",
        "GET /v1/toolsets/{name}",
        "PUT /v1/toolsets/{name}",
        "PUT /v1/registered-toolsets/{name}",
        "POST /v1/registered-toolsets/{name}/refresh",
        "GET /v1/registered-toolsets/{name}/review",
        "POST /v1/registered-toolsets/{name}/review/accept",
        "POST /v1/registered-toolsets/{name}/review/reject",
        "DELETE /v1/registered-toolsets/{name}",
        "POST /v1/runs/{runId}/calls",
        "GET /v1/runs/{runId}/calls/{callId}",
        "POST /v1/runs/{runId}/calls/{callId}/cancel",
        "GET /v1/runs/{runId}",
        "PUT /v1/runs/{runId}/policy",
        "POST /v1/runs/{runId}/calls/{callId}/approve",
        "POST /v1/runs/{runId}/calls/{callId}/deny",
        "GET /v1/approvals",
        "GET /v1/traces/{traceId}",
        "GET /v1/runs/{runId}/events",
        "GET /v1/events",
        "POST /v1/keys",
        "GET /v1/keys",
        "DELETE /v1/keys/{keyId}",
        "GET /v1/me",
        "GET /v1/capabilities",
        "POST /v1/capabilities/refresh",
        "GET /v1/metrics",
        "GET /v1/audit",
        "POST /v1/subscriptions",
        "GET /v1/subscriptions",
        "GET /v1/subscriptions/{id}",
        "POST /v1/subscriptions/{id}/pause",
        "POST /v1/subscriptions/{id}/resume",
        "POST /v1/subscriptions/{id}/rotate-secret",
        "DELETE /v1/subscriptions/{id}",
        "GET /v1/subscriptions/{id}/failures",
        "POST /v1/subscriptions/{id}/redrive",
        "POST /v1/subscriptions/{id}/replay",
        "POST /v1/select",
        "POST /v1/prompt",
        "GET /v1/tools/search",
        "POST /v1/tools/search",
        "POST /v1/agents/render",
      ].sort(),
    );
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.paths["/health"]?.get?.security).toEqual([]);
    expect(document.paths["/v1/tools"]?.get?.security).toEqual([{ bearerAuth: [] }]);
    expect(JSON.stringify(document.paths["/v1/runs/{runId}/calls"]?.post?.requestBody)).toContain(
      "#/components/schemas/CallRequest",
    );
    expect(document.components.schemas).toHaveProperty("Call");
    expect(document.components.schemas).toHaveProperty("Error");
  });

  it("serves /docs as a self-contained, escaped HTML page of the endpoints", async () => {
    const response = await system.request("/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|https?:\/\/(?!localhost)/i);
    expect(html).toContain("/v1/runs/{runId}/calls");
    expect(html).toContain("Call a tool under a run");
    expect(html).toContain("&lt;key&gt;");
    for (const method of ["GET", "POST", "PUT", "DELETE"]) expect(html).toContain(`>${method}<`);
  });
});
