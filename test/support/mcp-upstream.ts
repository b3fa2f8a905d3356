import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { type Loopback, listenOnLoopback } from "./loopback";

export interface RemoteToolFixture {
  tool: Tool;
  run(
    args: Record<string, unknown>,
    call: RemoteCallContext,
  ): CallToolResult | Promise<CallToolResult>;
}

/** What a fixture's tool may do while it runs. */
export interface RemoteCallContext {
  /**
   * Sends `notifications/progress` for this call, as the SDK's own servers do, when the
   * request asked for progress (`_meta.progressToken`); false when it did not.
   */
  progress(progress: number, total?: number, message?: string): Promise<boolean>;
  /** Aborts when the client cancels the request or its connection goes away. */
  signal: AbortSignal;
}

export interface McpUpstream {
  /** The Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  url: string;
  /** Replaces the tools the server lists and runs, as a redeployed server would. */
  setTools(tools: RemoteToolFixture[]): void;
  /** Headers of every request received, in order. */
  headers: IncomingMessage["headers"][];
  /** tools/call names received, in order. */
  calls: string[];
  close(): Promise<void>;
}

/**
 * A real MCP server on loopback, built with the official SDK (stateless Streamable HTTP,
 * answering with SSE streams as the SDK does by default). `requiredHeader` makes it answer
 * 401 to requests without that header value.
 */
export async function startMcpUpstream(
  initial: RemoteToolFixture[],
  options: { requiredHeader?: { name: string; value: string } } = {},
): Promise<McpUpstream> {
  let tools = initial;
  const headers: IncomingMessage["headers"][] = [];
  const calls: string[] = [];

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    headers.push(req.headers);
    const required = options.requiredHeader;
    if (required && req.headers[required.name.toLowerCase()] !== required.value) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const server = new Server({ name: "fixture", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: tools.map((entry) => entry.tool),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      calls.push(request.params.name);
      const entry = tools.find((candidate) => candidate.tool.name === request.params.name);
      if (!entry) {
        return {
          content: [{ type: "text", text: `unknown tool ${request.params.name}` }],
          isError: true,
        };
      }
      const progressToken = request.params._meta?.progressToken;
      return entry.run(request.params.arguments ?? {}, {
        signal: extra.signal,
        async progress(progress, total, message) {
          if (progressToken === undefined) return false;
          await extra.sendNotification({
            method: "notifications/progress",
            params: {
              progressToken,
              progress,
              ...(total === undefined ? {} : { total }),
              ...(message === undefined ? {} : { message }),
            },
          });
          return true;
        },
      });
    });
    await answerStatelessly(server, req, res);
  };

  const { url, close } = await listenOnLoopback(serve);
  return {
    url,
    setTools: (next) => {
      tools = next;
    },
    headers,
    calls,
    close,
  };
}

/** A remote tool with no input that always answers `text`: most fixtures need no more. */
export function textTool(
  name: string,
  description: string,
  text: string | ((args: Record<string, unknown>) => string),
  properties: Record<string, object> = {},
): RemoteToolFixture {
  return {
    tool: { name, description, inputSchema: { type: "object", properties } },
    run: (args) => ({
      content: [{ type: "text", text: typeof text === "string" ? text : text(args) }],
    }),
  };
}

/** One JSON-RPC request a `serveMcpServer` server received. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingMessage["headers"];
}

/**
 * A real v1-SDK `McpServer` on loopback, stateless Streamable HTTP, built afresh for each
 * request by `build` (which sees the request, so a tool may answer with its headers), with the
 * JSON-RPC method and headers of every request kept in `received`.
 */
export async function serveMcpServer(
  name: string,
  build: (server: McpServer, req: IncomingMessage) => void,
): Promise<Loopback & { received: ReceivedRequest[] }> {
  const received: ReceivedRequest[] = [];
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const server = new McpServer({ name, version: "1" });
    build(server, req);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method?: unknown };
    if (typeof body.method === "string")
      received.push({ method: body.method, headers: req.headers });
    await answerStatelessly(server, req, res, body);
  };
  return { ...(await listenOnLoopback(serve)), received };
}

/**
 * Answers one request with a server built for it alone (stateless Streamable HTTP), both
 * closed when the response is; `body` when the caller has read it already.
 */
async function answerStatelessly(
  server: Server | McpServer,
  req: IncomingMessage,
  res: ServerResponse,
  body?: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
