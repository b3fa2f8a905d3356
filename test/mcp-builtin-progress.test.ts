import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { defineTool } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/*
 * A built-in tool's progress reaches an MCP caller that asked for it (a progress token), on
 * both protocol generations, through the official clients: the same path a registered
 * server's progress takes (the call's caller link), every step as the tool reports it.
 */

const counter = defineTool({
  spec: {
    id: "test_counter",
    toolset: "test_builtin_progress",
    title: "Counter",
    description: "Counts to four, reporting each number.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({ counted: z.number() }),
  async execute(_input, context) {
    for (let n = 1; n <= 4; n++) {
      context.progress(n, 4, `counted ${n}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { output: "counted to 4", data: { counted: 4 } };
  },
});

let system: TestToolbus;
let api: ApiServer;

beforeAll(async () => {
  system = await startTestToolbus({
    tools: [...builtinTools, counter],
    toolsets: [
      ...builtinToolsets,
      { name: "test_builtin_progress", description: "Test tools", owner: "tests", kind: "builtin" },
    ],
  });
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
});

const requestInit = () => ({ headers: { authorization: `Bearer ${system.adminKey}` } });
const mcpUrl = () => new URL(`${api.url}/mcp`);

describe("a built-in tool's progress over MCP", () => {
  it("reaches a 2025-11-25 client, every step in order", async () => {
    const client = new ClientV1({ name: "progress-test", version: "1" });
    await client.connect(new TransportV1(mcpUrl(), { requestInit: requestInit() }));
    try {
      const steps: [number, number | undefined][] = [];
      const result = await client.callTool({ name: "test_counter", arguments: {} }, undefined, {
        onprogress: (step) => {
          steps.push([step.progress, step.total]);
        },
      });
      expect(result.isError).toBeFalsy();
      expect(steps).toEqual([
        [1, 4],
        [2, 4],
        [3, 4],
        [4, 4],
      ]);
    } finally {
      await client.close();
    }
  });

  it("reaches a 2026-07-28 client, every step in order", async () => {
    const client = new ClientV2(
      { name: "progress-test", version: "2" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new TransportV2(mcpUrl(), { requestInit: requestInit() }));
    try {
      const steps: number[] = [];
      await client.callTool({ name: "test_counter", arguments: {} }, {
        onprogress: (step: { progress: number }) => {
          steps.push(step.progress);
        },
      } as never);
      expect(steps).toEqual([1, 2, 3, 4]);
    } finally {
      await client.close();
    }
  });
});
