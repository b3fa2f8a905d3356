/**
 * Baseline for the fastpath group: the official MCP SDK in its documented stateless
 * Streamable HTTP pattern (a new McpServer and transport per request, no session ids, plain
 * JSON answers) on plain node:http, with readability_analyzer run in this process.
 * Prints its port on stdout once it listens.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { testToolContext } from "@toolbus/core/testing";
import { readabilityAnalyzer, readabilityInput } from "@toolbus/tools/readability";

const context = testToolContext(undefined);

function mcpServer(): McpServer {
  const server = new McpServer({ name: "bare-mcp-bench", version: "1.0.0" });
  server.registerTool(
    "readability_analyzer",
    { description: readabilityAnalyzer.spec.description, inputSchema: readabilityInput },
    async (input) => {
      const outcome = await readabilityAnalyzer.execute(input, context);
      return {
        content: [{ type: "text", text: outcome.output }],
        structuredContent: { ...outcome.data },
      };
    },
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/mcp") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // Nothing outlives the request, as in the SDK's stateless example.
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: -32603, message: "Internal server error" },
          id: null,
        }),
      );
    }
  }
});

http.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${(http.address() as AddressInfo).port}\n`);
});
