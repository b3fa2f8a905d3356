import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EverythingServer, startEverythingServer } from "./support/server-everything";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The published reference server `@modelcontextprotocol/server-everything`, registered as a
// remote toolset: what its tools do through Toolbus's /mcp is what they do when called
// directly, for both generations of the official client. Its image arrives as the same image,
// every progress notification of its long-running operation arrives, and its elicitation and
// sampling requests are answered by the caller's own handlers.
//
// The server speaks 2025-11-25 only (it is built on the first-generation SDK and does not
// answer `server/discover`), so the second-generation client calls it directly over
// 2025-11-25, and through Toolbus pinned to 2026-07-28, where the server's requests come to it
// as `input_required` rounds.

/** The remote tool names this test calls. */
const REMOTE = {
  image: "get-tiny-image",
  longRunning: "trigger-long-running-operation",
  elicitation: "trigger-elicitation-request",
  sampling: "trigger-sampling-request",
} as const;
type Tool = keyof typeof REMOTE;

/** The caller's answers: a timeout or a dropped request cannot produce either. */
const ELICITED_NAME = "Ada Lovelace";
const SAMPLED_TEXT = "A fixed answer from the test's sampling handler.";

/** Few, short steps; the expected text names them, so a timeout failure reads differently. */
const OPERATION = { duration: 0.6, steps: 3 };
const OPERATION_DONE = "Long running operation completed. Duration: 0.6 seconds, Steps: 3.";

let everything: EverythingServer;
let system: TestToolbus;
let api: ApiServer;
/** The tool ids the registration's answer listed: what Toolbus serves of the server. */
let registeredIds: string[] = [];

beforeAll(async () => {
  everything = await startEverythingServer();
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await system.request("/v1/registered-toolsets/everything", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "everything",
      description: "The MCP reference server that exercises every protocol feature",
      owner: "team-relay",
      url: everything.url,
      defaults: { category: "research", timeoutMs: 20_000 },
    },
  });
  const text = await registered.text();
  expect(registered.status, text).toBe(201);
  registeredIds = (JSON.parse(text) as { tools: { id: string }[] }).tools.map((t) => t.id);
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await everything?.close();
});

const headers = () => ({ authorization: `Bearer ${system.adminKey}` });

type Route = "direct" | "toolbus";
interface Generation {
  /** Connected, with elicitation and sampling declared and answered. */
  connect(route: Route): Promise<Caller>;
}
interface Caller {
  call(tool: Tool, args?: Record<string, unknown>, onProgress?: () => void): Promise<Result>;
  close(): Promise<void>;
}
interface Result {
  isError?: boolean;
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
}

/** Toolbus's id for a remote tool: its name snake_cased. */
const toolbusName = (tool: Tool) => REMOTE[tool].replaceAll("-", "_");
const nameOn = (route: Route, tool: Tool) =>
  route === "direct" ? REMOTE[tool] : toolbusName(tool);
const urlOf = (route: Route) => new URL(route === "direct" ? everything.url : `${api.url}/mcp`);
const requestInit = (route: Route) => (route === "direct" ? {} : { headers: headers() });

const elicited = { action: "accept" as const, content: { name: ELICITED_NAME, check: true } };
const sampled = {
  role: "assistant" as const,
  model: "test-model",
  content: { type: "text" as const, text: SAMPLED_TEXT },
};

/** `@modelcontextprotocol/sdk` v1: 2025-11-25, directly and through Toolbus. */
const v1: Generation = {
  async connect(route) {
    const client = new ClientV1(
      { name: "everything-test", version: "1" },
      { capabilities: { elicitation: {}, sampling: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => elicited);
    client.setRequestHandler(CreateMessageRequestSchema, async () => sampled);
    await client.connect(new TransportV1(urlOf(route), { requestInit: requestInit(route) }));
    return {
      call: async (tool, args = {}, onProgress) =>
        (await client.callTool(
          { name: nameOn(route, tool), arguments: args },
          undefined,
          onProgress ? { onprogress: onProgress } : undefined,
        )) as Result,
      close: () => client.close(),
    };
  },
};

/**
 * `@modelcontextprotocol/client` v2: pinned to 2026-07-28 through Toolbus; directly over
 * 2025-11-25 (its default), the only generation the server speaks.
 */
const v2: Generation = {
  async connect(route) {
    const client = new ClientV2(
      { name: "everything-test", version: "2" },
      {
        capabilities: { elicitation: {}, sampling: {} },
        ...(route === "toolbus"
          ? { versionNegotiation: { mode: { pin: "2026-07-28" } } }
          : { versionNegotiation: { mode: "legacy" } }),
      },
    );
    client.setRequestHandler("elicitation/create", async () => elicited);
    client.setRequestHandler("sampling/createMessage", async () => sampled);
    await client.connect(new TransportV2(urlOf(route), { requestInit: requestInit(route) }));
    return {
      call: async (tool, args = {}, onProgress) =>
        (await client.callTool(
          { name: nameOn(route, tool), arguments: args },
          onProgress ? { onprogress: onProgress } : undefined,
        )) as Result,
      close: () => client.close(),
    };
  },
};

/**
 * Runs `work` with a fresh caller on each route, closing both: directly first, then through
 * Toolbus once its registration listed `tool` (else it fails saying so, not with whatever
 * calling an unknown tool answers).
 */
async function sideBySide<T>(
  generation: Generation,
  tool: Tool,
  work: (caller: Caller) => Promise<T>,
): Promise<Record<Route, T>> {
  const out = {} as Record<Route, T>;
  for (const route of ["direct", "toolbus"] as const) {
    if (route === "toolbus") {
      expect(registeredIds, `registration listed no ${toolbusName(tool)}`).toContain(
        toolbusName(tool),
      );
    }
    const caller = await generation.connect(route);
    try {
      out[route] = await work(caller);
    } finally {
      await caller.close();
    }
  }
  return out;
}

const textOf = (result: Result) =>
  result.content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("\n");

for (const [label, generation] of [
  ["@modelcontextprotocol/sdk v1 (2025-11-25)", v1],
  ["@modelcontextprotocol/client v2 (2026-07-28 through Toolbus)", v2],
] as const) {
  describe(`a ${label} caller`, () => {
    it("gets the server's image as the same image block through Toolbus as directly", async () => {
      const results = await sideBySide(generation, "image", (caller) => caller.call("image"));
      const images = (result: Result) => result.content.filter((block) => block.type === "image");
      expect(images(results.direct)).toHaveLength(1);
      expect(images(results.direct)[0]).toMatchObject({ mimeType: "image/png" });
      expect(results.toolbus.isError ?? false, JSON.stringify(results.toolbus)).toBe(false);
      expect(images(results.toolbus)).toEqual(images(results.direct));
    });

    it("gets every progress notification of the long-running operation, and its result", async () => {
      const results = await sideBySide(generation, "longRunning", async (caller) => {
        let notifications = 0;
        const result = await caller.call("longRunning", OPERATION, () => {
          notifications += 1;
        });
        return { notifications, result };
      });
      expect(textOf(results.direct.result)).toBe(OPERATION_DONE);
      expect(results.direct.notifications).toBe(OPERATION.steps);
      expect(textOf(results.toolbus.result), JSON.stringify(results.toolbus.result)).toBe(
        OPERATION_DONE,
      );
      expect(results.toolbus.notifications).toBe(results.direct.notifications);
    });

    it("answers the server's elicitation with its own handler, and the result reflects the answer", async () => {
      const results = await sideBySide(generation, "elicitation", (caller) =>
        caller.call("elicitation"),
      );
      expect(textOf(results.direct)).toContain(`- Name: ${ELICITED_NAME}`);
      expect(textOf(results.direct)).toContain("- Agreed to terms: true");
      expect(results.toolbus.isError ?? false, JSON.stringify(results.toolbus)).toBe(false);
      expect(textOf(results.toolbus)).toBe(textOf(results.direct));
    });

    it("answers the server's sampling request with its own handler, and the result carries the message", async () => {
      const prompt = { prompt: "Say something fixed.", maxTokens: 20 };
      const results = await sideBySide(generation, "sampling", (caller) =>
        caller.call("sampling", prompt),
      );
      expect(textOf(results.direct)).toContain(SAMPLED_TEXT);
      expect(results.toolbus.isError ?? false, JSON.stringify(results.toolbus)).toBe(false);
      expect(textOf(results.toolbus)).toBe(textOf(results.direct));
    });
  });
}

describe("a tool the server runs only as a task", () => {
  it("is called as a task and polled by Toolbus, and its caller gets the result as from any tool", async () => {
    const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
      method: "POST",
      json: { tool: "simulate_research_query", input: { topic: "tide tables" }, wait: 20 },
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const call = JSON.parse(text) as { status: string; result: { output: string } };
    expect(call.status).toBe("succeeded");
    expect(call.result.output).toContain("tide tables");
    // What the server asked of its callers is not asked of Toolbus's: it polls for them.
    const spec = await system.request("/v1/tools/simulate_research_query");
    const implementation = ((await spec.json()) as { implementation: Record<string, unknown> })
      .implementation;
    expect(implementation).toMatchObject({ remoteTaskRequired: true });
  }, 30_000);

  it("stops polling and ends cancelled when its call is cancelled", async () => {
    const runId = system.runId();
    const started = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "simulate_research_query", input: { topic: "tides" }, callId: "t1", wait: 0 },
    });
    expect(started.status).toBe(202);
    await expect
      .poll(async () => {
        const call = await system.request(`/v1/runs/${runId}/calls/t1`);
        return ((await call.json()) as { status: string }).status;
      })
      .toBe("running");
    const cancelled = await system.request(`/v1/runs/${runId}/calls/t1/cancel`, {
      method: "POST",
    });
    expect(cancelled.status).toBe(202);
    await expect
      .poll(
        async () => {
          const call = await system.request(`/v1/runs/${runId}/calls/t1`);
          return ((await call.json()) as { result?: { failure?: { kind: string } } }).result
            ?.failure?.kind;
        },
        { timeout: 3_000 },
      )
      .toBe("cancelled");
  }, 30_000);
});
