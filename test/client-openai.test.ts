import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { toolbusTools } from "@toolbus/client/openai";
import { OpenAI } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AdapterKit, SELECTIONS, startAdapterKit } from "./support/adapter-kit";

// The OpenAI adapter with the official openai client, against a Chat Completions server on
// loopback that answers the way the real one does: tool calls first, text once the tool
// messages come back. It records each request so the test can see what the model was sent.

let kit: AdapterKit;
let fake: Server;
let openai: OpenAI;
/** The assistant messages the fake model answers with, in order. */
let script: unknown[] = [];
const requests: ChatRequest[] = [];

const chatRequest = z.object({
  model: z.string(),
  messages: z.array(z.looseObject({ role: z.string() })),
  tools: z
    .array(
      z.object({
        type: z.literal("function"),
        function: z.object({
          name: z.string(),
          description: z.string(),
          parameters: z.record(z.string(), z.unknown()),
        }),
      }),
    )
    .optional(),
});
type ChatRequest = z.infer<typeof chatRequest>;

beforeAll(async () => {
  kit = await startAdapterKit();
  fake = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const parsed = chatRequest.safeParse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
    if (request.url !== "/v1/chat/completions" || !parsed.success) {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "not a chat completion request" } }));
      return;
    }
    requests.push(parsed.data);
    const message = script.shift() ?? { role: "assistant", content: "No more answers." };
    const toolCalls = (message as { tool_calls?: unknown[] }).tool_calls;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        created: 1,
        model: parsed.data.model,
        choices: [
          {
            index: 0,
            message: { content: null, refusal: null, ...message },
            finish_reason: toolCalls ? "tool_calls" : "stop",
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  const { port } = fake.address() as AddressInfo;
  openai = new OpenAI({ apiKey: "test-key", baseURL: `http://127.0.0.1:${port}/v1` });
});
afterAll(async () => {
  await new Promise((resolve) => fake?.close(resolve));
  await kit?.stop();
});

function toolCall(id: string, name: string, args: string) {
  return { id, type: "function", function: { name, arguments: args } };
}

/** One turn of the usual loop: ask, dispatch the tool calls, ask again with their results. */
async function converse(runId: string, calls: unknown[]) {
  requests.length = 0;
  script = [
    { role: "assistant", tool_calls: calls },
    { role: "assistant", content: "Done." },
  ];
  const toolbus = await toolbusTools(kit.client, { runId, wait: 10 });
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: "user", content: "Use the tools." },
  ];
  const first = await openai.chat.completions.create({
    model: "fake",
    messages,
    tools: toolbus.tools,
  });
  const assistant = first.choices[0]?.message;
  if (!assistant) throw new Error("no message");
  messages.push(assistant, ...(await toolbus.dispatch(assistant.tool_calls)));
  const second = await openai.chat.completions.create({
    model: "fake",
    messages,
    tools: toolbus.tools,
  });
  return { answer: second.choices[0]?.message.content, toolMessages: requests[1]?.messages };
}

function toolResults(messages: ChatRequest["messages"] | undefined) {
  return (messages ?? [])
    .filter((message) => message.role === "tool")
    .map((message) => ({
      id: message.tool_call_id,
      result: JSON.parse(String(message.content)),
    }));
}

describe("toolbusTools for OpenAI function calling", () => {
  it.each(SELECTIONS)(
    "defines exactly the functions /v1/select selects for $label",
    async ({ options }) => {
      const toolbus = await toolbusTools(kit.client, { runId: kit.system.runId(), ...options });
      expect(toolbus.tools.map((tool) => tool.function.name)).toEqual(await kit.selected(options));
    },
  );

  it("sends the model each tool's description and JSON Schema", async () => {
    const runId = kit.system.runId();
    await converse(runId, [toolCall("call_a", "kit_echo", '{"text":"hi"}')]);
    const offered = requests[0]?.tools?.find((tool) => tool.function.name === "kit_echo");
    expect(offered?.function).toMatchObject({
      description: "Repeats the text (kit_echo).",
      parameters: { type: "object", required: ["text"] },
    });
  });

  it("runs the tool calls through Toolbus and answers each with a tool message in order", async () => {
    const runId = kit.system.runId();
    const { answer, toolMessages } = await converse(runId, [
      toolCall("call_1", "kit_echo", '{"text":"one"}'),
      toolCall("call_2", "kit_failing", '{"query":"two"}'),
    ]);

    expect(answer).toBe("Done.");
    expect(toolResults(toolMessages)).toEqual([
      {
        id: "call_1",
        result: {
          status: "succeeded",
          output: "echo: one",
          data: { echoed: "one" },
          citations: [],
        },
      },
      {
        id: "call_2",
        result: {
          status: "failed",
          failure: { kind: "upstream_error", message: "The upstream is down.", recovery: "replan" },
        },
      },
    ]);
    expect((await kit.calls(runId)).sort()).toEqual([
      "ToolCallScheduled kit_echo",
      "ToolCallScheduled kit_failing",
      "ToolResultReceived kit_echo succeeded",
      "ToolResultReceived kit_failing failed",
    ]);
  });

  it("answers a made-up tool, arguments that are not JSON and refused input without a call", async () => {
    const runId = kit.system.runId();
    const { toolMessages } = await converse(runId, [
      toolCall("call_x", "kit_admin_echo_typo", "{}"),
      toolCall("call_y", "kit_echo", "{not json"),
      toolCall("call_z", "kit_echo", '{"text":""}'),
    ]);

    const results = toolResults(toolMessages);
    expect(results.map((entry) => [entry.id, entry.result.failure.kind])).toEqual([
      ["call_x", "invalid_input"],
      ["call_y", "invalid_input"],
      ["call_z", "invalid_input"],
    ]);
    expect(results.every((entry) => entry.result.failure.recovery === "correct_call")).toBe(true);
    expect(results[0]?.result.failure.message).toContain("kit_admin_echo_typo");
    expect(await kit.calls(runId)).toEqual([]);
  });
});
