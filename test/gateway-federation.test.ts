import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { serveMcpServer } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The prompts, resources and completions of registered MCP servers, federated through /mcp:
// merged across the servers a caller may use, a clash resolved to one server, nothing of a
// toolset the caller may not use, and a server asked only for what it declares.

type Upstream = Awaited<ReturnType<typeof serveMcpServer>>;

/** A fixture server built by `build`; `methods` of what it received, in order. */
const startServer = (build: (server: McpServer) => void) =>
  serveMcpServer("fixture", (server) => build(server));
const methods = (upstream: Upstream) => upstream.received.map((request) => request.method);

const text = (value: string) => ({
  messages: [{ role: "user" as const, content: { type: "text" as const, text: value } }],
});
const tool = (server: McpServer, name: string) =>
  server.registerTool(name, { description: `${name} answers pong.` }, async () => ({
    content: [{ type: "text", text: "pong" }],
  }));
const resource = (server: McpServer, name: string, uri: string, body: string) =>
  server.registerResource(name, uri, { mimeType: "text/plain" }, async () => ({
    contents: [{ uri, mimeType: "text/plain", text: body }],
  }));

let alpha: Upstream;
let beta: Upstream;
let gamma: Upstream;
let delta: Upstream;
let system: TestToolbus;
let api: ApiServer;
let memberKey: string;
let viewerKey: string;

beforeAll(async () => {
  alpha = await startServer((server) => {
    tool(server, "alpha_ping");
    server.registerPrompt(
      "greet",
      { description: "Greets someone.", argsSchema: { name: z.string() } },
      async ({ name }) => text(`Hello, ${name}.`),
    );
    server.registerPrompt("shared_prompt", { description: "Alpha's." }, async () =>
      text("from alpha"),
    );
    resource(server, "notes", "memo://alpha/notes", "alpha's notes");
    resource(server, "shared", "memo://shared", "alpha's copy");
    server.registerResource(
      "items",
      new ResourceTemplate("memo://alpha/items/{id}", {
        list: undefined,
        complete: {
          id: (value) => ["apple", "apricot", "banana"].filter((v) => v.startsWith(value)),
        },
      }),
      { mimeType: "text/plain" },
      async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `item ${String(id)}` }] }),
    );
  });
  beta = await startServer((server) => {
    tool(server, "beta_ping");
    server.registerPrompt("shared_prompt", { description: "Beta's." }, async () =>
      text("from beta"),
    );
    server.registerPrompt("summarize", { description: "Summarizes." }, async () =>
      text("Summarize the log."),
    );
    resource(server, "shared", "memo://shared", "beta's copy");
    resource(server, "log", "memo://beta/log", "beta's log");
  });
  gamma = await startServer((server) => {
    tool(server, "gamma_ping");
    server.registerPrompt("secret_prompt", { description: "For admins." }, async () =>
      text("the secret"),
    );
    resource(server, "secret", "memo://gamma/secret", "gamma's secret");
  });
  // Tools and resources, no prompts: never asked for any.
  delta = await startServer((server) => {
    tool(server, "delta_ping");
    resource(server, "readme", "memo://delta/readme", "delta's readme");
  });
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  // Beta is registered before alpha: the clash rule is the toolset's name, not the order.
  const register = async (name: string, url: string, minRole?: string) => {
    const response = await system.request(`/v1/registered-toolsets/${name}`, {
      method: "PUT",
      json: {
        kind: "mcp",
        name,
        description: `The ${name} server`,
        owner: "team-federation",
        url,
        defaults: {
          category: "research",
          timeoutMs: 5_000,
          // Stated, so every role sees the toolset (unstated, it would be admins only).
          availability: minRole ? { minRole } : {},
        },
      },
    });
    expect(response.status, await response.clone().text()).toBe(201);
  };
  await register("beta", beta.url);
  await register("alpha", alpha.url);
  await register("gamma", gamma.url, "admin");
  await register("delta", delta.url);
  const created = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "federation-member", role: "member" },
  });
  expect(created.status).toBe(201);
  memberKey = ((await created.json()) as { key: string }).key;
  const viewer = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "federation-viewer", role: "viewer" },
  });
  expect(viewer.status).toBe(201);
  viewerKey = ((await viewer.json()) as { key: string }).key;
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await Promise.all([alpha, beta, gamma, delta].map((server) => server?.close()));
});

async function legacyClient(key = system.adminKey) {
  const client = new ClientV1({ name: "federation-test", version: "1" });
  await client.connect(
    new TransportV1(new URL(`${api.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function modernClient(key = system.adminKey) {
  const client = new ClientV2({ name: "federation-test", version: "1" });
  await client.connect(
    new TransportV2(new URL(`${api.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

describe("registered servers' prompts and resources through /mcp (2025-11-25)", () => {
  it("are merged across servers, a clash going to the toolset whose name sorts first", async () => {
    const client = await legacyClient();
    try {
      expect(client.getServerCapabilities()).toMatchObject({
        prompts: {},
        resources: {},
        completions: {},
        logging: {},
      });
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name).sort()).toEqual([
        "greet",
        "secret_prompt",
        "shared_prompt",
        "summarize",
      ]);
      expect(prompts.find((prompt) => prompt.name === "shared_prompt")?.description).toBe(
        "Alpha's.",
      );
      const { resources } = await client.listResources();
      expect(resources.map((entry) => entry.uri).sort()).toEqual([
        "memo://alpha/notes",
        "memo://beta/log",
        "memo://delta/readme",
        "memo://gamma/secret",
        "memo://shared",
      ]);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((entry) => entry.uriTemplate)).toEqual([
        "memo://alpha/items/{id}",
      ]);

      const shared = await client.readResource({ uri: "memo://shared" });
      expect(shared.contents).toEqual([
        { uri: "memo://shared", mimeType: "text/plain", text: "alpha's copy" },
      ]);
      const log = await client.readResource({ uri: "memo://beta/log" });
      expect(log.contents[0]).toMatchObject({ text: "beta's log" });
      const item = await client.readResource({ uri: "memo://alpha/items/42" });
      expect(item.contents[0]).toMatchObject({ uri: "memo://alpha/items/42", text: "item 42" });

      const clash = await client.getPrompt({ name: "shared_prompt" });
      expect(clash.messages).toEqual([
        { role: "user", content: { type: "text", text: "from alpha" } },
      ]);
      const greeting = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
      expect(greeting.messages[0]?.content).toEqual({ type: "text", text: "Hello, Ada." });

      const completed = await client.complete({
        ref: { type: "ref/resource", uri: "memo://alpha/items/{id}" },
        argument: { name: "id", value: "ap" },
      });
      expect(completed.completion.values).toEqual(["apple", "apricot"]);
      expect(await client.setLoggingLevel("info")).toEqual({});
    } finally {
      await client.close();
    }
  });

  it("answers not found for what no server the caller may use offers", async () => {
    const client = await legacyClient();
    try {
      const read = client.readResource({ uri: "memo://nowhere" });
      await expect(read).rejects.toBeInstanceOf(McpError);
      // The SDK answers -32602 with the uri on both generations (2025-11-25's -32002 is the
      // code clients must also accept).
      await expect(read).rejects.toMatchObject({ code: -32602, data: { uri: "memo://nowhere" } });
      await expect(client.getPrompt({ name: "no_such_prompt" })).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await client.close();
    }
  });

  it("asks a server only for what it declares: one without prompts is skipped, not an error", async () => {
    const client = await legacyClient();
    try {
      await client.listPrompts();
      await client.listResources();
      expect(methods(delta)).not.toContain("prompts/list");
      expect(methods(delta)).toContain("resources/list");
      expect(methods(alpha)).toContain("prompts/list");
    } finally {
      await client.close();
    }
  });
});

describe("a viewer, who may list but not call", () => {
  it("lists prompts and resources, but may not have a server asked with its credential", async () => {
    const client = await legacyClient(viewerKey);
    try {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name)).toContain("greet");
      const { resources } = await client.listResources();
      const uri = resources[0]?.uri;
      expect(uri).toBeDefined();
      const asked = () =>
        [alpha, beta, delta]
          .flatMap((server) => methods(server))
          .filter((method) => ["resources/read", "prompts/get"].includes(method)).length;
      const before = asked();
      await expect(client.readResource({ uri: String(uri) })).rejects.toMatchObject({
        message: expect.stringMatching(/needs the member role/),
      });
      await expect(client.getPrompt({ name: "greet" })).rejects.toMatchObject({
        message: expect.stringMatching(/needs the member role/),
      });
      expect(asked()).toBe(before);
    } finally {
      await client.close();
    }
  });
});

describe("a member who may not use a toolset", () => {
  it("sees none of its prompts and resources, and gets not found on reading them", async () => {
    const client = await legacyClient(memberKey);
    try {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name)).not.toContain("secret_prompt");
      expect(prompts.map((prompt) => prompt.name)).toContain("greet");
      const { resources } = await client.listResources();
      expect(resources.map((entry) => entry.uri)).not.toContain("memo://gamma/secret");
      await expect(client.readResource({ uri: "memo://gamma/secret" })).rejects.toMatchObject({
        code: -32602,
        data: { uri: "memo://gamma/secret" },
      });
      await expect(client.getPrompt({ name: "secret_prompt" })).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await client.close();
    }
  });
});

describe("registered servers' prompts and resources through /mcp (2026-07-28)", () => {
  it("are the same merged lists, private to the caller, and route reads and gets", async () => {
    const client = await modernClient();
    try {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name).sort()).toEqual([
        "greet",
        "secret_prompt",
        "shared_prompt",
        "summarize",
      ]);
      const shared = await client.readResource({ uri: "memo://shared" });
      expect(shared.contents).toEqual([
        { uri: "memo://shared", mimeType: "text/plain", text: "alpha's copy" },
      ]);
      const clash = await client.getPrompt({ name: "shared_prompt" });
      expect(clash.messages[0]?.content).toEqual({ type: "text", text: "from alpha" });
      const missing = client.readResource({ uri: "memo://nowhere" });
      await expect(missing).rejects.toBeInstanceOf(ProtocolError);
      await expect(missing).rejects.toMatchObject({
        code: -32602,
        data: { uri: "memo://nowhere" },
      });
    } finally {
      await client.close();
    }
  });

  it("keeps a member from a toolset it may not use", async () => {
    const client = await modernClient(memberKey);
    try {
      const { resources } = await client.listResources();
      expect(resources.map((entry) => entry.uri)).not.toContain("memo://gamma/secret");
      await expect(client.readResource({ uri: "memo://gamma/secret" })).rejects.toMatchObject({
        code: -32602,
      });
    } finally {
      await client.close();
    }
  });
});
