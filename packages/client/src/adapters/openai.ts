import type { ToolbusClient } from "@toolbus/client";
import type { OpenAI } from "openai";
import { z } from "zod";
import {
  adapterOptionsOf,
  callForModel,
  invalidInput,
  selectedTools,
  type ToolbusAdapterOptions,
  type ToolbusToolResult,
} from "./shared.js";

export type { ToolbusAdapterOptions, ToolbusToolResult };

type FunctionTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;
type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageToolCall;
type ToolMessage = OpenAI.Chat.Completions.ChatCompletionToolMessageParam;

/** Toolbus's selected tools for OpenAI function calling, and the way back. */
export interface ToolbusOpenAITools {
  /** Function definitions for `chat.completions.create({ tools })`, named by tool id. */
  tools: FunctionTool[];
  /**
   * Runs an assistant message's `tool_calls` through Toolbus, side by side, and answers with
   * one `role: "tool"` message per call in the same order, ready to append to the messages.
   * Each message's content is a ToolbusToolResult as JSON.
   */
  dispatch(
    toolCalls: readonly ToolCall[] | null | undefined,
    options?: { signal?: AbortSignal },
  ): Promise<ToolMessage[]>;
}

// What a tool call must be for Toolbus to run it; anything else is answered, never thrown,
// so the conversation can go on.
const functionCall = z.object({
  id: z.string().min(1),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/**
 * The tools Toolbus selects for these options as OpenAI Chat Completions function tools, plus
 * a dispatcher for the `tool_calls` the model answers with.
 */
export async function toolbusTools(
  client: ToolbusClient,
  options: ToolbusAdapterOptions,
): Promise<ToolbusOpenAITools> {
  const checked = adapterOptionsOf(options);
  const specs = await selectedTools(client, checked);
  const selected = new Set(specs.map((spec) => spec.id));

  async function answer(raw: unknown, signal: AbortSignal | undefined): Promise<ToolMessage> {
    const parsed = functionCall.safeParse(raw);
    const toolCallId = (raw as { id?: unknown } | null)?.id;
    if (!parsed.success) {
      return message(String(toolCallId ?? ""), {
        status: "failed",
        failure: {
          kind: "unsupported_call",
          message: "Toolbus runs function tool calls only.",
          recovery: "replan",
        },
      });
    }
    const { id, function: fn } = parsed.data;
    // A name the model made up is never sent to Toolbus: only what was offered can be called.
    if (!selected.has(fn.name)) {
      return message(id, invalidInput(`There is no tool ${fn.name}; use one of the tools given.`));
    }
    let input: unknown;
    try {
      input = fn.arguments.trim() === "" ? {} : JSON.parse(fn.arguments);
    } catch (error) {
      return message(id, invalidInput(`The arguments are not JSON: ${(error as Error).message}`));
    }
    return message(id, await callForModel(client, fn.name, input, { ...checked, signal }));
  }

  return {
    tools: specs.map((spec) => ({
      type: "function",
      function: {
        name: spec.id,
        description: spec.description,
        parameters: spec.inputSchema as Record<string, unknown>,
      },
    })),
    dispatch: (toolCalls, dispatchOptions = {}) =>
      Promise.all((toolCalls ?? []).map((call) => answer(call, dispatchOptions.signal))),
  };
}

function message(toolCallId: string, result: ToolbusToolResult): ToolMessage {
  return { role: "tool", tool_call_id: toolCallId, content: JSON.stringify(result) };
}
