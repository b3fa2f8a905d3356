import type { ToolMessage } from "@langchain/core/messages";
import { ToolInputParsingException } from "@langchain/core/tools";
import { toolbusTools } from "@toolbus/client/langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdapterKit, SELECTIONS, startAdapterKit } from "./support/adapter-kit";

// The LangChain.js adapter with @langchain/core: tools are run the way an agent runs a chat
// model's tool calls, `tool.invoke(toolCall)`, which answers with a ToolMessage.

let kit: AdapterKit;

beforeAll(async () => {
  kit = await startAdapterKit();
});
afterAll(() => kit?.stop());

async function toolNamed(runId: string, name: string) {
  const tools = await toolbusTools(kit.client, { runId, wait: 10 });
  const found = tools.find((tool) => tool.name === name);
  if (!found) throw new Error(`${name} was not offered`);
  return found;
}

describe("toolbusTools for LangChain.js", () => {
  it.each(SELECTIONS)(
    "offers exactly the tools /v1/select selects for $label",
    async ({ options }) => {
      const tools = await toolbusTools(kit.client, { runId: kit.system.runId(), ...options });
      expect(tools.map((tool) => tool.name)).toEqual(await kit.selected(options));
    },
  );

  it("runs a tool call through Toolbus and answers with a ToolMessage for that call", async () => {
    const runId = kit.system.runId();
    const echo = await toolNamed(runId, "kit_echo");
    expect(echo.description).toBe("Repeats the text (kit_echo).");

    const message = (await echo.invoke({
      type: "tool_call",
      id: "call-7",
      name: "kit_echo",
      args: { text: "hello" },
    })) as ToolMessage;

    expect(message.tool_call_id).toBe("call-7");
    expect(JSON.parse(String(message.content))).toEqual({
      status: "succeeded",
      output: "echo: hello",
      data: { echoed: "hello" },
      citations: [],
    });
    expect(await kit.calls(runId)).toEqual([
      "ToolCallScheduled kit_echo",
      "ToolResultReceived kit_echo succeeded",
    ]);
  });

  it("answers a failed tool with its failure in the ToolMessage", async () => {
    const runId = kit.system.runId();
    const failing = await toolNamed(runId, "kit_failing");
    const message = (await failing.invoke({
      type: "tool_call",
      id: "call-8",
      name: "kit_failing",
      args: { query: "news" },
    })) as ToolMessage;

    expect(JSON.parse(String(message.content))).toEqual({
      status: "failed",
      failure: { kind: "upstream_error", message: "The upstream is down.", recovery: "replan" },
    });
  });

  it("lets LangChain refuse arguments that do not fit the tool's JSON Schema, with no call", async () => {
    const runId = kit.system.runId();
    const echo = await toolNamed(runId, "kit_echo");
    await expect(echo.invoke({ words: "hello" })).rejects.toBeInstanceOf(ToolInputParsingException);
    expect(await kit.calls(runId)).toEqual([]);
  });
});
