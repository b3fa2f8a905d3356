import { toolbusTools } from "@toolbus/client/ai";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdapterKit, SELECTIONS, startAdapterKit } from "./support/adapter-kit";

// The AI SDK adapter with the AI SDK itself: generateText drives the tool loop, and the AI
// SDK's own mock model stands in for a provider (the one part that cannot run here).

let kit: AdapterKit;

beforeAll(async () => {
  kit = await startAdapterKit();
});
afterAll(() => kit?.stop());

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A model that calls one tool, then answers with text once it has the result. */
function callingModel(toolName: string, input: unknown) {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          { type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      },
      {
        content: [{ type: "text", text: "Done." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        warnings: [],
      },
    ],
  });
}

describe("toolbusTools for the AI SDK", () => {
  it.each(SELECTIONS)("offers exactly what /v1/select selects for $label", async ({ options }) => {
    const tools = await toolbusTools(kit.client, { runId: kit.system.runId(), ...options });
    expect(Object.keys(tools)).toEqual(await kit.selected(options));
  });

  it("runs the model's tool call through Toolbus under the run and hands back the result", async () => {
    const runId = kit.system.runId();
    const model = callingModel("kit_echo", { text: "hello" });
    const result = await generateText({
      model,
      tools: await toolbusTools(kit.client, { runId, wait: 10 }),
      stopWhen: stepCountIs(2),
      prompt: "Echo hello.",
    });

    expect(result.text).toBe("Done.");
    const [first] = result.steps;
    expect(first?.toolResults.map((part) => [part.toolName, part.output])).toEqual([
      [
        "kit_echo",
        { status: "succeeded", output: "echo: hello", data: { echoed: "hello" }, citations: [] },
      ],
    ]);
    // The model was given the catalog's description and JSON Schema for the tool.
    const offered = model.doGenerateCalls[0]?.tools?.find((tool) => tool.name === "kit_echo");
    expect(offered).toMatchObject({
      description: "Repeats the text (kit_echo).",
      inputSchema: { type: "object", required: ["text"] },
    });
    expect(await kit.calls(runId)).toEqual([
      "ToolCallScheduled kit_echo",
      "ToolResultReceived kit_echo succeeded",
    ]);
  });

  it("gives the model a failed tool's failure as its result, with what to do next", async () => {
    const runId = kit.system.runId();
    const result = await generateText({
      model: callingModel("kit_failing", { query: "news" }),
      tools: await toolbusTools(kit.client, { runId, wait: 10 }),
      stopWhen: stepCountIs(2),
      prompt: "Find news.",
    });

    expect(result.steps[0]?.toolResults.map((part) => part.output)).toEqual([
      {
        status: "failed",
        failure: { kind: "upstream_error", message: "The upstream is down.", recovery: "replan" },
      },
    ]);
    expect(await kit.calls(runId)).toEqual([
      "ToolCallScheduled kit_failing",
      "ToolResultReceived kit_failing failed",
    ]);
  });

  it("answers input the tool refuses with a correctable failure, scheduling nothing", async () => {
    const runId = kit.system.runId();
    const result = await generateText({
      model: callingModel("kit_echo", { text: "" }),
      tools: await toolbusTools(kit.client, { runId }),
      stopWhen: stepCountIs(2),
      prompt: "Echo nothing.",
    });

    expect(result.steps[0]?.toolResults.map((part) => part.output)).toEqual([
      {
        status: "failed",
        failure: expect.objectContaining({ kind: "invalid_input", recovery: "correct_call" }),
      },
    ]);
    expect(await kit.calls(runId)).toEqual([]);
  });

  it("refuses options with a misspelt field before asking the API", async () => {
    await expect(
      toolbusTools(kit.client, { runid: "r" } as unknown as { runId: string }),
    ).rejects.toMatchObject({
      code: "invalid_options",
      details: expect.arrayContaining([expect.objectContaining({ path: "runId" })]),
    });
  });
});
