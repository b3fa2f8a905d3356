import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AskingServer,
  PNG,
  startLegacyAskingServer,
  startModernAskingServer,
} from "./support/mcp-asking-servers";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// What a registered server does in the middle of a call reaches the caller through /mcp, for
// both generations of the official client and servers of either generation: its progress, its
// log messages, and its requests (here an elicitation), answered and passed back.

let legacy: AskingServer;
let modern: AskingServer;
let system: TestToolbus;
let api: ApiServer;

beforeAll(async () => {
  [legacy, modern] = await Promise.all([startLegacyAskingServer(), startModernAskingServer()]);
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  for (const [name, server] of [
    ["asking_2025", legacy],
    ["asking_2026", modern],
  ] as const) {
    const registered = await system.request(`/v1/registered-toolsets/${name}`, {
      method: "PUT",
      json: {
        kind: "mcp",
        name,
        description: "A server that asks its client",
        owner: "team-relay",
        url: server.url,
        // The 2026-07-28 server's tools are cached: a result that holds what one caller
        // answered must still never be served to another.
        defaults: {
          category: "research",
          timeoutMs: 10_000,
          ...(name === "asking_2026" ? { cache: { ttlSeconds: 300 } } : {}),
        },
      },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
  }
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await Promise.all([legacy?.close(), modern?.close()]);
});

const headers = () => ({ authorization: `Bearer ${system.adminKey}` });
const mcpUrl = () => new URL(`${api.url}/mcp`);

/** A 2025-11-25 client (the first-generation SDK) that answers forms with `name`. */
async function legacyClient(name = "Ada") {
  const client = new ClientV1(
    { name: "relay-test", version: "1" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: { name },
  }));
  await client.connect(new TransportV1(mcpUrl(), { requestInit: { headers: headers() } }));
  return client;
}

/** A 2026-07-28 client (the second-generation SDK), with or without the elicitation capability. */
async function modernClient(options: { name?: string; elicitation?: boolean } = {}) {
  const client = new ClientV2(
    { name: "relay-test", version: "2" },
    {
      capabilities: options.elicitation === false ? {} : { elicitation: {} },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  if (options.elicitation !== false) {
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept" as const,
      content: { name: options.name ?? "Grace" },
    }));
  }
  await client.connect(new TransportV2(mcpUrl(), { requestInit: { headers: headers() } }));
  return client;
}

const textOf = (result: unknown) =>
  ((result as { content: Array<{ type: string; text?: string }> }).content ?? [])
    .map((block) => block.text ?? "")
    .join("");

describe("a 2025-11-25 caller", () => {
  it("answers a 2025-11-25 server's elicitation, and the server gets the answer", async () => {
    const client = await legacyClient("Ada");
    try {
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      expect(result.isError).toBe(false);
      expect(textOf(result)).toBe("Hello, Ada!");
    } finally {
      await client.close();
    }
  });

  it("gets three progress notifications and the server's log message, then an image as an image", async () => {
    const client = await legacyClient();
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (message) => {
      logs.push(message.params);
    });
    try {
      const steps: number[] = [];
      const result = await client.callTool({ name: "three_steps", arguments: {} }, undefined, {
        onprogress: (step) => {
          steps.push(step.progress);
        },
      });
      expect(textOf(result)).toBe("done in three steps");
      expect(steps).toEqual([1, 2, 3]);
      expect(logs).toEqual([{ level: "info", logger: "steps", data: "three steps done" }]);
      const image = await client.callTool({ name: "snapshot", arguments: {} });
      expect(image.content).toEqual([{ type: "image", data: PNG, mimeType: "image/png" }]);
    } finally {
      await client.close();
    }
  });

  it("answers a 2026-07-28 server's input_required round on its own stream", async () => {
    const client = await legacyClient("Lin");
    try {
      const result = await client.callTool({ name: "greet", arguments: {} });
      expect(textOf(result)).toBe("Hello, Lin!");
    } finally {
      await client.close();
    }
  });
});

describe("a 2026-07-28 caller", () => {
  it("answers a 2026-07-28 server's round through Toolbus's own input_required", async () => {
    const client = await modernClient({ name: "Grace" });
    try {
      const result = await client.callTool({ name: "greet", arguments: {} });
      expect(textOf(result)).toBe("Hello, Grace!");
      const image = await client.callTool({ name: "picture", arguments: {} });
      expect(image.content).toContainEqual({ type: "image", data: PNG, mimeType: "image/png" });
    } finally {
      await client.close();
    }
  });

  it("never gets another caller's answer from the cache of a cached tool", async () => {
    for (const name of ["Ada", "Linus"]) {
      const client = await modernClient({ name });
      try {
        const result = await client.callTool({ name: "greet", arguments: {} });
        expect(textOf(result)).toBe(`Hello, ${name}!`);
      } finally {
        await client.close();
      }
    }
  });

  it("answers a 2025-11-25 server's mid-stream elicitation as an input_required round", async () => {
    const client = await modernClient({ name: "Hedy" });
    try {
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      expect(textOf(result)).toBe("Hello, Hedy!");
    } finally {
      await client.close();
    }
  });

  it("gets three progress notifications for the token it sent", async () => {
    const client = await modernClient();
    try {
      const steps: number[] = [];
      await client.callTool({ name: "three_steps", arguments: {} }, {
        onprogress: (step: { progress: number }) => {
          steps.push(step.progress);
        },
      } as never);
      expect(steps).toEqual([1, 2, 3]);
    } finally {
      await client.close();
    }
  });

  it("is not asked what it did not declare: the server refuses the call itself", async () => {
    const client = await modernClient({ elicitation: false });
    try {
      const result = await client.callTool({ name: "ask_name", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Method not found/i);
    } finally {
      await client.close();
    }
  });
});

describe("a call's relay", () => {
  it("is its own caller's: another key naming the call neither waits for it nor answers it", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "someone-else", role: "admin" },
    });
    const { key: otherKey } = (await created.json()) as { key: string };
    const runId = system.runId();
    const callId = "call-owned-by-the-admin-key";
    let intruder: { status: number; body: string } | undefined;
    const client = new ClientV1(
      { name: "relay-test", version: "1" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => {
      // While the owner is being asked, another key (an admin too: its role is no obstacle)
      // names the same call.
      const response = await fetch(mcpUrl(), {
        method: "POST",
        headers: {
          authorization: `Bearer ${otherKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "tools/call",
          params: {
            name: "ask_name",
            arguments: {},
            _meta: { "toolbus/runId": runId, "toolbus/callId": callId },
          },
        }),
      });
      intruder = { status: response.status, body: await response.text() };
      return { action: "accept", content: { name: "Ada" } };
    });
    await client.connect(new TransportV1(mcpUrl(), { requestInit: { headers: headers() } }));
    try {
      const result = await client.callTool({
        name: "ask_name",
        arguments: {},
        _meta: { "toolbus/runId": runId, "toolbus/callId": callId },
      });
      expect(textOf(result)).toBe("Hello, Ada!");
      expect(intruder?.body).toMatch(/"code":-32602/);
      expect(intruder?.body).toMatch(/another key|Another key/);
      expect(intruder?.body).not.toMatch(/What is your name/);
    } finally {
      await client.close();
    }
  });
});

describe("requests nobody can answer", () => {
  it("fail a REST call at once with the server's refusal, not a timeout", async () => {
    const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
      method: "POST",
      json: { tool: "ask_name", input: {}, wait: 10 },
    });
    const body = (await response.json()) as {
      status: string;
      result: { failure?: { kind: string; message: string } };
    };
    expect(body.status).toBe("failed");
    expect(body.result.failure?.kind).not.toBe("timeout");
    expect(body.result.failure?.message).toMatch(/Method not found/i);
  });

  it("refuse an answer to a request that is not waiting, from any key", async () => {
    const forged = {
      jsonrpc: "2.0",
      id: `toolbus.relay.${Buffer.from(JSON.stringify(["run-x", "call-x", "nope"])).toString("base64url")}`,
      result: { action: "accept", content: { name: "Mallory" } },
    };
    const response = await fetch(mcpUrl(), {
      method: "POST",
      headers: {
        ...headers(),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify(forged),
    });
    expect(response.status).toBe(400);
  });
});
