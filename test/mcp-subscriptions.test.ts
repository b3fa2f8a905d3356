import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { McpSubscriptions } from "@toolbus/core/ports";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Loopback } from "./support/loopback";
import { serveMcpServer } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Resource subscriptions through /mcp on 2025-11-25: `resources/subscribe` stores the caller's
// subscription in the stage's table, and the GET /mcp stream reads the subscribed resources
// through the federation and tells the caller of each change. A real v1-SDK server on
// loopback whose resources change; the official v1 client, as an MCP host uses it.

/** What the fixture server serves, changed by the tests. */
const bodies = new Map<string, string>([
  ["memo://watched", "watched v1"],
  ["memo://other", "other v1"],
  ["memo://quiet", "quiet v1"],
]);
/** Items of the template that the server says it does not have (any more). */
const goneItems = new Set<string>();
/** resources/read requests the fixture received, by URI. */
const reads: string[] = [];

/** A v1-SDK MCP server on loopback, stateless, with changing resources and a template. */
const startServer = () =>
  serveMcpServer("watched", (server) => {
    server.registerTool("watch_ping", { description: "Answers pong." }, async () => ({
      content: [{ type: "text", text: "pong" }],
    }));
    for (const uri of bodies.keys()) {
      server.registerResource(uri, uri, { mimeType: "text/plain" }, async () => {
        reads.push(uri);
        return { contents: [{ uri, mimeType: "text/plain", text: bodies.get(uri) ?? "" }] };
      });
    }
    server.registerResource(
      "items",
      new ResourceTemplate("memo://items/{id}", { list: undefined }),
      { mimeType: "text/plain" },
      async (uri, { id }) => {
        reads.push(uri.href);
        if (goneItems.has(String(id))) throw new McpError(-32002, `No item ${String(id)}.`);
        return { contents: [{ uri: uri.href, text: `item ${String(id)}` }] };
      },
    );
  });

const POLL_MS = 40;

let upstream: Loopback;
let system: TestToolbus;
let api: ApiServer;
let subscriptions: McpSubscriptions;

beforeAll(async () => {
  upstream = await startServer();
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await system.request("/v1/registered-toolsets/watch", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "watch",
      description: "A server whose resources change",
      owner: "team-federation",
      url: upstream.url,
      // Stated, so members may use it (unstated, a new registration is admins only).
      defaults: { category: "research", timeoutMs: 5_000, availability: {} },
    },
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  const store = system.toolbus.apiDeps.mcpSubscriptions;
  if (!store) throw new Error("The stage keeps no MCP subscriptions.");
  subscriptions = store;
  // Subscribed resources read every POLL_MS, so a change reaches the caller within moments.
  api = await serveApi(
    createApi({ ...system.toolbus.apiDeps, mcpResourcePollMs: POLL_MS, keyCheckMs: 50 }),
    { port: 0 },
  );
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await upstream?.close();
});

async function newKey(role: "member" | "viewer", name: string) {
  const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
  expect(response.status).toBe(201);
  return (await response.json()) as { key: string; keyId: string };
}

/** A v1 client on its own key, collecting the updates it is told of. */
async function watcher(key: string) {
  const client = new Client({ name: "subscriptions-test", version: "1" });
  const updated: string[] = [];
  const errors: unknown[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  client.onerror = (error) => errors.push(error);
  return { client, updated, errors };
}

/** Waits until `done` holds (or fails after `ms`). */
async function until(done: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("Timed out waiting.");
    await sleep(10);
  }
}

/** Lets the stream read every subscribed resource a few more times. */
async function severalTicks(uri: string): Promise<void> {
  const before = reads.filter((read) => read === uri).length;
  await until(() => reads.filter((read) => read === uri).length >= before + 3);
}

const change = (uri: string, text: string) => bodies.set(uri, text);

describe("resource subscriptions through /mcp (2025-11-25)", () => {
  it("declares resources.subscribe and tells a subscriber once of each change", async () => {
    const { keyId, key } = await newKey("member", "subscriber");
    const { client, updated } = await watcher(key);
    try {
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true });
      expect(await client.subscribeResource({ uri: "memo://watched" })).toEqual({});
      expect(await client.subscribeResource({ uri: "memo://quiet" })).toEqual({});
      expect((await subscriptions.list(keyId)).map((entry) => entry.uri).sort()).toEqual([
        "memo://quiet",
        "memo://watched",
      ]);
      change("memo://watched", "watched v2");
      await until(() => updated.length > 0);
      await severalTicks("memo://watched");
      expect(updated).toEqual(["memo://watched"]);
      // The next change is told again, once.
      change("memo://watched", "watched v3");
      await until(() => updated.length > 1);
      await severalTicks("memo://watched");
      expect(updated).toEqual(["memo://watched", "memo://watched"]);
    } finally {
      await client.close();
    }
  });

  it("tells a subscriber nothing more once it unsubscribed", async () => {
    const { keyId, key } = await newKey("member", "unsubscriber");
    const { client, updated } = await watcher(key);
    try {
      await client.subscribeResource({ uri: "memo://other" });
      change("memo://other", "other v2");
      await until(() => updated.length > 0);
      expect(updated).toEqual(["memo://other"]);
      expect(await client.unsubscribeResource({ uri: "memo://other" })).toEqual({});
      expect(await subscriptions.list(keyId)).toEqual([]);
      // One never made is answered the same.
      expect(await client.unsubscribeResource({ uri: "memo://never" })).toEqual({});
      // Another subscription keeps the stream reading, so its ticks can be counted.
      await client.subscribeResource({ uri: "memo://quiet" });
      change("memo://other", "other v3");
      await severalTicks("memo://quiet");
      expect(updated).toEqual(["memo://other"]);
    } finally {
      await client.close();
    }
  });

  it("refuses a URI no federated server offers, with -32602 and the uri", async () => {
    const { keyId, key } = await newKey("member", "unknown-uri");
    const { client } = await watcher(key);
    try {
      await expect(client.subscribeResource({ uri: "memo://nowhere" })).rejects.toMatchObject({
        code: -32602,
        data: { uri: "memo://nowhere" },
      });
      await expect(
        client.subscribeResource({ uri: `memo://items/${"x".repeat(2_100)}` }),
      ).rejects.toMatchObject({ code: -32602 });
      expect(await subscriptions.list(keyId)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("refuses a key without the call permission", async () => {
    const { keyId, key } = await newKey("viewer", "viewer");
    const { client } = await watcher(key);
    try {
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true });
      await expect(client.subscribeResource({ uri: "memo://watched" })).rejects.toMatchObject({
        message: expect.stringMatching(/needs the member role/),
      });
      expect(await subscriptions.list(keyId)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("keeps each key's subscriptions its own", async () => {
    const first = await newKey("member", "first");
    const second = await newKey("member", "second");
    const a = await watcher(first.key);
    const b = await watcher(second.key);
    try {
      await a.client.subscribeResource({ uri: "memo://watched" });
      await b.client.subscribeResource({ uri: "memo://quiet" });
      // Another key's unsubscribe is its own: the first key's subscription stays.
      await b.client.unsubscribeResource({ uri: "memo://watched" });
      expect((await subscriptions.list(first.keyId)).map((entry) => entry.uri)).toEqual([
        "memo://watched",
      ]);
      change("memo://watched", "watched for a only");
      await until(() => a.updated.length > 0);
      await severalTicks("memo://quiet");
      expect(a.updated).toEqual(["memo://watched"]);
      expect(b.updated).toEqual([]);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it("drops a subscription whose resource the server no longer has", async () => {
    const { keyId, key } = await newKey("member", "dropped");
    const { client } = await watcher(key);
    try {
      await client.subscribeResource({ uri: "memo://items/doomed" });
      expect(await subscriptions.list(keyId)).toHaveLength(1);
      goneItems.add("doomed");
      const deadline = Date.now() + 5_000;
      while ((await subscriptions.list(keyId)).length > 0) {
        if (Date.now() > deadline) throw new Error("The subscription was never dropped.");
        await sleep(20);
      }
    } finally {
      await client.close();
    }
  });

  it("refuses the 101st subscription of a key, and still renews one it holds", async () => {
    const { keyId, key } = await newKey("member", "hundred");
    // Plain POSTs (stateless: no session), so no stream reads the hundred items meanwhile.
    const subscribe = async (uri: string) => {
      const response = await fetch(`${api.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "resources/subscribe",
          params: { uri },
        }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        result?: unknown;
        error?: { code: number; message: string; data?: unknown };
      };
    };
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) => subscribe(`memo://items/${batch * 10 + index}`)),
      );
      for (const answer of answers) expect(answer).toMatchObject({ result: {} });
    }
    expect(await subscriptions.list(keyId)).toHaveLength(100);
    const refused = await subscribe("memo://items/100");
    expect(refused.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/already holds 100 resource subscriptions/),
      data: { uri: "memo://items/100", limit: 100 },
    });
    expect(await subscribe("memo://items/7")).toMatchObject({ result: {} });
    expect(await subscriptions.list(keyId)).toHaveLength(100);
  }, 60_000);
});

describe("GET /mcp", () => {
  it("is a 405 on 2026-07-28 and without an event stream accepted, as before", async () => {
    for (const headers of [
      { accept: "text/event-stream", "mcp-protocol-version": "2026-07-28" },
      { accept: "application/json", "mcp-protocol-version": "2025-11-25" },
    ]) {
      const response = await fetch(`${api.url}/mcp`, {
        headers: { authorization: `Bearer ${system.adminKey}`, ...headers },
      });
      expect(response.status).toBe(405);
      await response.body?.cancel();
    }
  });

  it("is a 401 without a key, and ends once the key is revoked", async () => {
    const unauthenticated = await fetch(`${api.url}/mcp`, {
      headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" },
    });
    expect(unauthenticated.status).toBe(401);
    await unauthenticated.body?.cancel();
    const { keyId, key } = await newKey("member", "revoked");
    const response = await fetch(`${api.url}/mcp`, {
      headers: {
        authorization: `Bearer ${key}`,
        accept: "text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const revoked = await system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
    expect(revoked.status).toBeLessThan(300);
    // The stream ends: reading it to the end finishes.
    await expect(response.text()).resolves.toBeTypeOf("string");
  });
});
