import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { type Loopback, listenOnLoopback } from "./loopback";
import { legacySessions } from "./mcp-asking-servers";

/*
 * The tools the MCP conformance suite's `tasks-*` scenarios call, on a real MCP server on
 * loopback (the first-generation SDK, 2025-11-25, sessions). Every tool is an ordinary
 * synchronous one: Toolbus makes them tasks. Timings are what the scenarios rely on: a tool
 * that must come back as a task works for a second or more before it answers or asks, and
 * `test_tool_with_task` asks at once (its question is answered before the task exists).
 */

/** How each tool may run as a task, for the registration's `defaults.taskSupport`. */
export const FIXTURE_TASK_SUPPORT = {
  greet: "forbidden",
  failing_job: "required",
  protocol_error_job: "required",
  test_tool_with_task: "required",
} as const;

/** Long enough that a tool asking after it is asked inside its task, not before. */
const BEFORE_ASKING_MS = 1_200;

const TOOLS = [
  {
    name: "greet",
    description: "Greets by name, at once.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    },
  },
  {
    name: "slow_compute",
    description: "Works for the given number of seconds, then answers.",
    inputSchema: {
      type: "object",
      properties: { seconds: { type: "integer", minimum: 0 }, label: { type: "string" } },
      required: ["seconds"],
    },
  },
  {
    name: "failing_job",
    description: "Works for a second, then fails with a tool error.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "protocol_error_job",
    description: "Works for a second, then answers a JSON-RPC error.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "confirm_delete",
    description: "Asks for confirmation, then deletes the file.",
    inputSchema: {
      type: "object",
      properties: { filename: { type: "string" } },
      required: ["filename"],
    },
  },
  {
    name: "multi_input",
    description: "Asks two questions at once, then answers.",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "test_tool_with_task",
    description: "Asks for a name at once, works a while, then greets.",
    inputSchema: { type: "object", properties: {} },
  },
] as const;

type Extra = {
  signal: AbortSignal;
  sendRequest: (
    request: { method: "elicitation/create"; params: Record<string, unknown> },
    schema: typeof ElicitResultSchema,
  ) => Promise<{ action: string; content?: Record<string, unknown> }>;
};

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** Waits `ms`, or less when the call is cancelled (the caller cancelled its task). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function elicit(extra: Extra, message: string, properties: Record<string, unknown>) {
  return extra.sendRequest(
    {
      method: "elicitation/create",
      params: { message, requestedSchema: { type: "object", properties } },
    },
    ElicitResultSchema,
  );
}

async function callTool(
  name: string,
  args: Record<string, unknown>,
  extra: Extra,
): Promise<CallToolResult> {
  switch (name) {
    case "greet":
      return text(`Hello, ${String(args.name)}!`);
    case "slow_compute": {
      const seconds = Number(args.seconds ?? 0);
      await sleep(seconds * 1000, extra.signal);
      return text(`${String(args.label ?? "compute")}: done after ${seconds}s`);
    }
    case "failing_job":
      await sleep(1_000, extra.signal);
      return { content: [{ type: "text", text: "The job failed." }], isError: true };
    case "protocol_error_job":
      await sleep(1_000, extra.signal);
      throw new McpError(ErrorCode.InternalError, "The job broke the protocol.");
    case "confirm_delete": {
      await sleep(BEFORE_ASKING_MS, extra.signal);
      const answer = await elicit(extra, `Delete ${String(args.filename)}?`, {
        confirm: { type: "boolean" },
      });
      const confirmed = answer.action === "accept" && answer.content?.confirm === true;
      return text(confirmed ? `Deleted ${String(args.filename)}.` : "Nothing deleted.");
    }
    case "multi_input": {
      await sleep(BEFORE_ASKING_MS, extra.signal);
      const [name, confirm] = await Promise.all([
        elicit(extra, "Your name?", { name: { type: "string" } }),
        elicit(extra, "Go ahead?", { confirm: { type: "boolean" } }),
      ]);
      return text(`answers: ${name.action}, ${confirm.action}`);
    }
    case "test_tool_with_task": {
      const answer = await elicit(extra, "What is your name?", { name: { type: "string" } });
      await sleep(BEFORE_ASKING_MS, extra.signal);
      return text(`Hello, ${String(answer.content?.name ?? "whoever you are")}!`);
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
}

function makeServer(): Server {
  const server = new Server(
    { name: "tasks-fixture", version: "1" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS] }));
  // The low-level server: a thrown McpError goes out as a JSON-RPC error (McpServer would turn
  // it into an `isError` result), which is what protocol_error_job is for.
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(request.params.name, request.params.arguments ?? {}, extra as unknown as Extra),
  );
  return server;
}

/** Starts the fixture on 127.0.0.1; its Streamable HTTP endpoint is `url`. */
export async function startTasksFixtureServer(): Promise<Loopback> {
  return listenOnLoopback(legacySessions(makeServer));
}
