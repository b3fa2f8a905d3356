import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSafeResponse } from "./support/hostile";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Keys, roles, CORS, size limits and response hygiene against the real composed system.

type Who = "none" | "revoked" | "viewer" | "member" | "admin";
/** What a caller may do on a route: public, or the permission it needs (stage defaults). */
type Need = "public" | "read" | "call" | "subscribe" | "approve" | "admin";

let system: TestToolbus;
const keys: Record<Exclude<Who, "none">, string> = {
  revoked: "",
  viewer: "",
  member: "",
  admin: "",
};
let openApiRoutes: string[];

async function createKey(name: string, role: string) {
  const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; keyId: string };
}

beforeAll(async () => {
  system = await startTestToolbus();
  keys.viewer = (await createKey("sec-viewer", "viewer")).key;
  keys.member = (await createKey("sec-member", "member")).key;
  keys.admin = (await createKey("sec-admin", "admin")).key;
  const revoked = await createKey("sec-revoked", "admin");
  keys.revoked = revoked.key;
  expect((await system.request(`/v1/keys/${revoked.keyId}`, { method: "DELETE" })).status).toBe(
    200,
  );
  const doc = (await (await system.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  openApiRoutes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
  );
  documented = Object.fromEntries(
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, operation]) => [
        `${method.toUpperCase()} ${path}`,
        operation as {
          "x-toolbus-permission"?: string;
          "x-toolbus-role"?: string;
          description?: string;
        },
      ]),
    ),
  );
});
let documented: Record<
  string,
  { "x-toolbus-permission"?: string; "x-toolbus-role"?: string; description?: string }
> = {};
afterAll(() => system?.stop(), 60_000);

const RANK: Record<Who, number> = { none: -1, revoked: -1, viewer: 0, member: 1, admin: 2 };
const NEEDS: Record<Exclude<Need, "public">, number> = {
  read: 0,
  call: 1,
  subscribe: 1,
  approve: 2,
  admin: 2,
};

/** Route x role: every route of the API with what it needs and a request that exercises it. */
const TABLE: Record<string, { need: Need; path?: string; json?: unknown }> = {
  "GET /health": { need: "public" },
  "GET /v1/tools": { need: "read" },
  "GET /v1/tools/{id}": { need: "read", path: "/v1/tools/readability_analyzer" },
  "PUT /v1/tools/{id}": { need: "admin", path: "/v1/tools/sec_probe", json: { id: "x" } },
  "GET /v1/toolsets": { need: "read" },
  "GET /v1/toolsets/{name}": { need: "read", path: "/v1/toolsets/text-analysis" },
  "PUT /v1/toolsets/{name}": { need: "admin", path: "/v1/toolsets/sec-probe", json: {} },
  "PUT /v1/registered-toolsets/{name}": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_probe",
    json: { kind: "mcp" },
  },
  "POST /v1/registered-toolsets/{name}/refresh": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_missing/refresh",
  },
  "GET /v1/registered-toolsets/{name}/review": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_missing/review",
  },
  "POST /v1/registered-toolsets/{name}/review/accept": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_missing/review/accept",
  },
  "POST /v1/registered-toolsets/{name}/review/reject": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_missing/review/reject",
  },
  "DELETE /v1/registered-toolsets/{name}": {
    need: "admin",
    path: "/v1/registered-toolsets/sec_missing",
  },
  "POST /v1/tools/{id}/enable": { need: "admin", path: "/v1/tools/sec_missing/enable" },
  "POST /v1/tools/{id}/disable": { need: "admin", path: "/v1/tools/sec_missing/disable" },
  "PUT /v1/tools/{id}/availability": {
    need: "admin",
    path: "/v1/tools/sec_missing/availability",
    json: {},
  },
  "POST /v1/runs/{runId}/calls": {
    need: "call",
    path: "/v1/runs/run-sec/calls",
    json: { tool: "readability_analyzer", input: { text: "Hi there." }, wait: 0 },
  },
  "GET /v1/runs/{runId}/calls/{callId}": { need: "read", path: "/v1/runs/run-sec/calls/nope" },
  "GET /v1/runs/{runId}": { need: "read", path: "/v1/runs/run-sec" },
  "PUT /v1/runs/{runId}/policy": {
    need: "call",
    path: "/v1/runs/run-sec-policy/policy",
    json: { maxCalls: 5 },
  },
  "POST /v1/runs/{runId}/calls/{callId}/cancel": {
    need: "call",
    path: "/v1/runs/run-sec/calls/nope/cancel",
  },
  "POST /v1/runs/{runId}/calls/{callId}/approve": {
    need: "approve",
    path: "/v1/runs/run-sec/calls/nope/approve",
  },
  "POST /v1/runs/{runId}/calls/{callId}/deny": {
    need: "approve",
    path: "/v1/runs/run-sec/calls/nope/deny",
  },
  "GET /v1/approvals": { need: "approve" },
  "GET /v1/traces/{traceId}": { need: "read", path: `/v1/traces/${"0".repeat(31)}1` },
  "GET /v1/runs/{runId}/events": { need: "read", path: "/v1/runs/run-sec/events" },
  "GET /v1/events": { need: "read" },
  "POST /v1/keys": { need: "admin", json: { name: "x" } },
  "GET /v1/keys": { need: "admin" },
  "DELETE /v1/keys/{keyId}": { need: "admin", path: "/v1/keys/sec-missing-key" },
  "GET /v1/capabilities": { need: "read" },
  "GET /v1/me": { need: "read" },
  "POST /v1/capabilities/refresh": { need: "admin" },
  "GET /v1/metrics": { need: "admin" },
  "GET /v1/audit": { need: "admin" },
  "POST /v1/subscriptions": {
    need: "subscribe",
    json: { name: "probe", pattern: { source: ["toolbus"] }, target: { kind: "ftp" } },
  },
  "GET /v1/subscriptions": { need: "subscribe" },
  "GET /v1/subscriptions/{id}": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}`,
  },
  "POST /v1/subscriptions/{id}/pause": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/pause`,
  },
  "POST /v1/subscriptions/{id}/resume": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/resume`,
  },
  "POST /v1/subscriptions/{id}/rotate-secret": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/rotate-secret`,
  },
  "DELETE /v1/subscriptions/{id}": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}`,
  },
  "GET /v1/subscriptions/{id}/failures": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/failures`,
  },
  "POST /v1/subscriptions/{id}/replay": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/replay`,
    json: { runId: "run-sec" },
  },
  "POST /v1/subscriptions/{id}/redrive": {
    need: "subscribe",
    path: `/v1/subscriptions/sub_${"0".repeat(24)}/redrive`,
    json: {},
  },
  "POST /v1/select": { need: "read", json: {} },
  "GET /v1/tools/search": { need: "read", path: "/v1/tools/search?q=links" },
  "POST /v1/tools/search": { need: "read", json: { q: "links" } },
  "POST /v1/prompt": { need: "read", json: {} },
  "POST /v1/agents/render": {
    need: "read",
    json: { harness: "claude-code", agent: { name: "a", description: "d", prompt: "p" } },
  },
  "POST /mcp": {
    need: "read",
    json: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "sec", version: "1" },
      },
    },
  },
};

function requestFor(route: string, who: Who) {
  const entry = TABLE[route];
  if (!entry) throw new Error(`no table entry for ${route}`);
  const [method, template] = route.split(" ") as [string, string];
  const key = who === "none" ? null : keys[who];
  return system.request(entry.path ?? template, {
    method,
    key,
    // MCP's transport wants both; elsewhere text/event-stream would open a live stream.
    ...(route === "POST /mcp"
      ? { headers: { accept: "application/json, text/event-stream" } }
      : {}),
    ...(entry.json !== undefined ? { json: entry.json } : {}),
  });
}

describe("roles on every route", () => {
  it("has a table entry for every route in /openapi.json, plus POST /mcp", () => {
    const missing = openApiRoutes.filter((route) => !(route in TABLE));
    expect(missing).toEqual([]);
    const stale = Object.keys(TABLE).filter(
      (route) => route !== "POST /mcp" && !openApiRoutes.includes(route),
    );
    expect(stale).toEqual([]);
  });

  it("says in OpenAPI which permission and role each route needs, as the routes enforce it", () => {
    const roles = {
      read: "viewer",
      call: "member",
      subscribe: "member",
      approve: "admin",
      admin: "admin",
    } as const;
    for (const route of openApiRoutes) {
      const need = TABLE[route]?.need;
      const operation = documented[route];
      expect(operation?.["x-toolbus-permission"], route).toBe(need);
      if (need && need !== "public") {
        expect(operation?.["x-toolbus-role"], route).toBe(roles[need]);
        expect(operation?.description, route).toContain(
          `Needs the \`${roles[need]}\` role or higher`,
        );
      }
    }
  });

  const whos: Who[] = ["none", "revoked", "viewer", "member", "admin"];
  it.each(Object.keys(TABLE))(
    "%s: 401 without a valid key, 403 below its role, else allowed",
    async (route) => {
      const need = TABLE[route]?.need ?? "admin";
      const got: Record<string, number> = {};
      const expected: Record<string, string> = {};
      for (const who of whos) {
        const response = await requestFor(route, who);
        const { status } = await expectSafeResponse(response, { jsonRpc: route === "POST /mcp" });
        got[who] = status;
        if (need === "public") expected[who] = "allowed";
        else if (RANK[who] < 0) expected[who] = "401";
        else if (RANK[who] < NEEDS[need]) expected[who] = "403";
        else expected[who] = "allowed";
      }
      const actual = Object.fromEntries(
        Object.entries(got).map(([who, status]) => [
          who,
          status === 401 || status === 403 ? String(status) : "allowed",
        ]),
      );
      expect({ route, ...actual }).toEqual({ route, ...expected });
    },
    30_000,
  );
});

describe("API keys", () => {
  const allKeys = () => [system.adminKey, ...Object.values(keys)];
  /**
   * A key and its secret part (`tbk_<keyId>_<secret>`: the key id is public, the secret is
   * not; the bootstrap key is all secret): none may appear anywhere.
   */
  const needles = () =>
    allKeys().flatMap((key) => [
      key,
      key.startsWith("tbk_") ? key.slice("tbk_0123456789abcdef_".length) : key,
    ]);

  it("never returns a key after creation: not in GET /v1/keys nor in any other GET", async () => {
    const gets = openApiRoutes
      .filter((route) => route.startsWith("GET "))
      .map((route) => TABLE[route]?.path ?? route.slice(4));
    for (const path of [...gets, "/openapi.json", "/docs"]) {
      const text = await (await system.request(path)).text();
      for (const needle of needles())
        expect(text.includes(needle), `${path} leaks a key`).toBe(false);
    }
    const list = (await (await system.request("/v1/keys")).json()) as {
      keys: Record<string, unknown>[];
    };
    expect(list.keys.length).toBeGreaterThanOrEqual(4);
    for (const record of list.keys) {
      expect(Object.keys(record)).not.toContain("key");
      expect(Object.keys(record).some((field) => /hash|secret/i.test(field))).toBe(false);
    }
  });

  it("never logs a key, on success or failure paths", async () => {
    const captured: string[] = [];
    const restore: (() => void)[] = [];
    for (const name of ["log", "error", "warn", "info", "debug"] as const) {
      const original = console[name];
      console[name] = (...args: unknown[]) => {
        captured.push(args.map((arg) => (typeof arg === "string" ? arg : safeJson(arg))).join(" "));
      };
      restore.push(() => {
        console[name] = original;
      });
    }
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        captured.push(String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => {
        stream.write = original;
      });
    }
    try {
      for (const route of Object.keys(TABLE)) {
        for (const who of ["viewer", "member", "admin", "revoked"] as const) {
          await (await requestFor(route, who)).text();
        }
      }
      // Malformed and unknown keys, keys in the wrong header, keys in the query string.
      for (const key of allKeys()) {
        await system.request("/v1/tools", {
          key: null,
          headers: { authorization: `Basic ${key}` },
        });
        await system.request("/v1/tools", {
          key: null,
          headers: { authorization: `Bearer ${key}x` },
        });
        await system.request(`/v1/tools?key=${key}`, { key: null });
        await system.request(`/v1/runs/${system.runId()}/calls`, {
          method: "POST",
          key,
          json: { tool: "readability_analyzer", input: { text: "A key probe." }, wait: 0 },
        });
      }
      await system.settle();
    } finally {
      for (const undo of restore.reverse()) undo();
    }
    const log = captured.join("\n");
    for (const needle of needles()) expect(log.includes(needle), "a key was logged").toBe(false);
  }, 60_000);
});

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? `${value.message}\n${value.stack}` : JSON.stringify(value);
  } catch {
    return String(value);
  }
}

describe("CORS is off by default", () => {
  it("answers a preflight and a cross-origin GET without Access-Control-Allow-Origin", async () => {
    const preflight = await system.request("/v1/tools", {
      method: "OPTIONS",
      key: null,
      headers: {
        origin: "https://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });
    expect(preflight.status).toBeLessThan(500);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    for (const path of ["/v1/tools", "/health", "/openapi.json"]) {
      const response = await system.request(path, { headers: { origin: "https://evil.example" } });
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
    }
  });
});

describe("request size limits", () => {
  const big = "x".repeat(300 * 1024);

  it("answers a 300 KB body with 413 JSON on REST routes", async () => {
    for (const [method, path] of [
      ["POST", `/v1/runs/${"run-big"}/calls`],
      ["POST", "/v1/agents/render"],
      ["PUT", "/v1/tools/big_tool"],
      ["POST", "/v1/keys"],
    ] as const) {
      const response = await system.request(path, {
        method,
        json: { tool: "readability_analyzer", input: { text: big }, wait: 0 },
      });
      expect(response.status, path).toBe(413);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe("payload_too_large");
    }
  });

  it("refuses a 300 KB body on /mcp with a 4xx and no crash", async () => {
    const response = await system.request("/mcp", {
      method: "POST",
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "ping", params: { pad: big } },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    await expectSafeResponse(response, { jsonRpc: true });
  });

  it("refuses an oversized body before authentication without reading it into an error", async () => {
    const response = await system.request("/v1/runs/run-big/calls", {
      method: "POST",
      key: null,
      json: { pad: big },
    });
    expect([401, 413]).toContain(response.status);
    await expectSafeResponse(response);
  });
});

describe("response hygiene", () => {
  it("sends no server banner, no x-powered-by and nosniff on success, error and 404 answers", async () => {
    const responses = [
      await system.request("/health", { key: null }),
      await system.request("/v1/tools"),
      await system.request("/v1/tools", { key: null }),
      await system.request("/v1/tools/nope_nope"),
      await system.request("/nowhere"),
      await system.request("/v1/runs/run-x/calls", {
        method: "POST",
        body: "{",
        headers: { "content-type": "application/json" },
      }),
      await system.request("/v1/keys", { method: "POST", key: keys.viewer, json: {} }),
    ];
    for (const response of responses) {
      await expectSafeResponse(response);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });
});
