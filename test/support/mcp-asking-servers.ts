import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { serve } from "@hono/node-server";
import { McpServer as LegacyServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  createMcpHandler,
  inputRequired,
  McpServer as ModernServer,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import { closableOnLoopback, listenOnLoopback } from "./loopback";

/*
 * Two real MCP servers on loopback that ask their client something in the middle of a call,
 * each in one protocol generation only: a 2025-11-25 server (the first-generation SDK, with
 * sessions) that sends an elicitation request on the call's stream, and a 2026-07-28 server
 * (the second-generation SDK) that answers `input_required`. Tool names differ, so both can be
 * registered on one stage: `ask_name`, `three_steps` (progress and a log message) and
 * `snapshot` (an image) on the first; `greet` and `picture` on the second.
 */

/** A 1x1 PNG. */
export const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

export interface AskingServer {
  /** Its Streamable HTTP endpoint. */
  url: string;
  close(): Promise<void>;
}

const NAME_FORM = {
  message: "What is your name?",
  requestedSchema: {
    type: "object" as const,
    properties: { name: { type: "string" as const } },
    required: ["name"],
  },
};

/** The greeting both servers answer, from the form's content. */
function greeting(content: unknown): string {
  const name = (content as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? `Hello, ${name}!` : "Hello, whoever you are.";
}

/** A 2025-11-25 server: sessions, requests and notifications on each call's event stream. */
export async function startLegacyAskingServer(): Promise<AskingServer> {
  const make = () => {
    const server = new LegacyServer(
      { name: "asking-2025", version: "1" },
      { capabilities: { logging: {} } },
    );
    server.registerTool(
      "ask_name",
      { description: "Asks the user for their name and greets them." },
      async (extra) => {
        // On the call's own stream, as the reference servers ask.
        const answer = await extra.sendRequest(
          { method: "elicitation/create", params: NAME_FORM },
          ElicitResultSchema,
        );
        return {
          content: [
            {
              type: "text",
              text: answer.action === "accept" ? greeting(answer.content) : `(${answer.action})`,
            },
          ],
        };
      },
    );
    server.registerTool(
      "three_steps",
      { description: "Takes three steps, reporting each, and logs once." },
      async (extra) => {
        const token = extra._meta?.progressToken;
        for (let step = 1; step <= 3; step++) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: step, total: 3, message: `step ${step}` },
            });
          }
        }
        await extra.sendNotification({
          method: "notifications/message",
          params: { level: "info", logger: "steps", data: "three steps done" },
        });
        return { content: [{ type: "text", text: "done in three steps" }] };
      },
    );
    server.registerTool("snapshot", { description: "A picture." }, async () => ({
      content: [{ type: "image", data: PNG, mimeType: "image/png" }],
    }));
    return server;
  };
  return listenOnLoopback(legacySessions(make));
}

/** A first-generation SDK server (McpServer or the low-level Server): what a session connects. */
interface Connectable {
  connect(transport: StreamableHTTPServerTransport): Promise<void>;
}

/**
 * A 2025-11-25 Streamable HTTP endpoint with sessions, as first-generation SDK servers run:
 * an `initialize` POST opens a session with a new server from `make`, and every later request
 * of that session goes to its transport.
 */
export function legacySessions(make: () => Connectable) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known) {
      await known.handleRequest(req, res);
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await make().connect(transport);
    await transport.handleRequest(req, res);
  };
}

/** A 2026-07-28 server: no sessions; asks by answering `input_required`. */
export async function startModernAskingServer(): Promise<AskingServer> {
  const handler = createMcpHandler(
    () => {
      const server = new ModernServer({ name: "asking-2026", version: "1" });
      server.registerTool(
        "greet",
        { description: "Asks the user for their name and greets them.", inputSchema: z.object({}) },
        async (_args, ctx) => {
          const answer = ctx.mcpReq.inputResponses?.name as
            | { action?: string; content?: unknown }
            | undefined;
          if (!answer) {
            return inputRequired({ inputRequests: { name: inputRequired.elicit(NAME_FORM) } });
          }
          return { content: [{ type: "text", text: greeting(answer.content) }] };
        },
      );
      server.registerTool(
        "picture",
        { description: "A picture.", inputSchema: z.object({}) },
        async () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }),
      );
      return server;
    },
    { legacy: "reject" },
  );
  return closableOnLoopback(
    serve({
      fetch: (request) => handler.fetch(request),
      port: 0,
      hostname: "127.0.0.1",
    }) as Server,
  );
}
