import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type ApiServer, serveApi } from "@toolbus/local";
import { MAX_RESULT_BYTES } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpUpstream, type RemoteToolFixture, startMcpUpstream } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// A registered MCP server's answers reach the caller as the server sent them: an image as an
// image, audio as audio, a file as a file, over REST, on the bus and through /mcp with both
// generations of the official client.

/** A 1x1 PNG: real image bytes, so a client that decodes them can. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV = Buffer.from("RIFF\u0024\u0000\u0000\u0000WAVEfmt ").toString("base64");

const noInput = { type: "object", properties: {}, additionalProperties: false } as const;

const SNAPSHOT = [
  { type: "text" as const, text: "The dashboard at noon." },
  {
    type: "image" as const,
    data: PNG,
    mimeType: "image/png",
    annotations: { audience: ["user" as const] },
  },
];
const snapshot: RemoteToolFixture = {
  tool: { name: "snapshot", description: "A picture of the dashboard.", inputSchema: noInput },
  run: () => ({ content: SNAPSHOT }),
};
const REPORT = [
  { type: "audio" as const, data: WAV, mimeType: "audio/wav" },
  { type: "resource_link" as const, uri: "file:///reports/q3.pdf", name: "q3.pdf" },
  {
    type: "resource" as const,
    resource: { uri: "file:///reports/q3.md", mimeType: "text/markdown", text: "# Q3" },
  },
];
const mixed: RemoteToolFixture = {
  tool: { name: "report", description: "A report with its sources.", inputSchema: noInput },
  run: () => ({ content: REPORT }),
};
/** An image over the result cap: it must fail with its size, not arrive cut. */
const huge: RemoteToolFixture = {
  tool: { name: "huge_image", description: "Too large to keep.", inputSchema: noInput },
  run: () => ({
    content: [{ type: "image", data: "A".repeat(MAX_RESULT_BYTES + 4), mimeType: "image/png" }],
  }),
};
const notContent: RemoteToolFixture = {
  tool: {
    name: "bad_image",
    description: "Sends bytes that are not base64.",
    inputSchema: noInput,
  },
  run: () => ({ content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] }),
};

let server: McpUpstream;
let system: TestToolbus;
let api: ApiServer;

beforeAll(async () => {
  server = await startMcpUpstream([snapshot, mixed, huge, notContent]);
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await system.request("/v1/registered-toolsets/studio", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "studio",
      description: "A server that answers in pictures and files",
      owner: "team-studio",
      url: server.url,
      defaults: { category: "research", timeoutMs: 5_000 },
    },
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await server?.close();
});

type Result = {
  status: string;
  result: {
    output: string;
    data: unknown;
    content?: unknown[];
    failure?: { kind: string; message: string };
  };
};

async function callRest(tool: string, runId = system.runId()) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool, input: {}, wait: 10 },
  });
  return (await response.json()) as Result;
}

const headers = () => ({ authorization: `Bearer ${system.adminKey}` });

describe("content from a registered MCP server, over REST and the bus", () => {
  it("is kept block by block as the server sent it, with a line per block for text readers", async () => {
    const runId = system.runId();
    const body = await callRest("snapshot", runId);
    expect(body.status).toBe("succeeded");
    expect(body.result.content).toEqual(SNAPSHOT);
    expect(body.result.data).toBeNull();
    expect(body.result.output).toBe("The dashboard at noon.\n[image: image/png, 70 bytes]");
    const events = await system.events<{ detailType: string; detail: { content?: unknown } }>(
      runId,
    );
    const received = events.find((event) => event.detailType === "ToolResultReceived");
    expect(received?.detail.content).toEqual(SNAPSHOT);
  });

  it("keeps audio, resource links and embedded resources", async () => {
    const body = await callRest("report");
    expect(body.result.content).toEqual(REPORT);
    expect(body.result.output).toContain("[resource link: q3.pdf <file:///reports/q3.pdf>]");
    expect(body.result.output).toContain("[resource file:///reports/q3.md]\n# Q3");
  });

  it("fails a result over the cap with its size, never cut short", async () => {
    const body = await callRest("huge_image");
    expect(body.status).toBe("failed");
    expect(body.result.failure?.kind).toBe("invalid_output");
    expect(body.result.failure?.message).toMatch(
      new RegExp(`its \\d+ bytes \\(1 image\\) are over the ${MAX_RESULT_BYTES} bytes`),
    );
    expect(body.result.content).toBeUndefined();
  });

  it("fails content that is not MCP content, and keeps none of it", async () => {
    const body = await callRest("bad_image");
    expect(body.status).toBe("failed");
    // The server's own SDK refuses to send it; Toolbus's check (content.test.ts) is the
    // second line, for servers that do not check what they send.
    expect(body.result.failure?.message).toMatch(/studio .*content/is);
    expect(body.result.content).toBeUndefined();
  });
});

describe("content from a registered MCP server, through /mcp", () => {
  it("reaches a first-generation client as an image, with no output schema invented", async () => {
    const client = new ClientV1({ name: "gateway-test", version: "1" });
    await client.connect(
      new TransportV1(new URL(`${api.url}/mcp`), { requestInit: { headers: headers() } }),
    );
    try {
      const { tools } = await client.listTools();
      const listed = tools.find((tool) => tool.name === "snapshot");
      expect(listed?.outputSchema).toBeUndefined();
      const result = await client.callTool({ name: "snapshot", arguments: {} });
      expect(result.isError).toBe(false);
      expect(result.content).toEqual(SNAPSHOT);
      expect(result.structuredContent).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("reaches a second-generation client on the current revision as the same blocks", async () => {
    const client = new ClientV2({ name: "gateway-test", version: "1" });
    await client.connect(
      new TransportV2(new URL(`${api.url}/mcp`), { requestInit: { headers: headers() } }),
    );
    try {
      const result = await client.callTool({ name: "report", arguments: {} });
      expect(result.content).toEqual(REPORT);
      const image = await client.callTool({ name: "snapshot", arguments: {} });
      expect(image.content).toContainEqual(
        expect.objectContaining({ type: "image", data: PNG, mimeType: "image/png" }),
      );
    } finally {
      await client.close();
    }
  });
});
