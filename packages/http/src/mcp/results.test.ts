import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallRecord, CallResult } from "@toolbus/wire/model/call";
import { type ToolSpec, type ToolSpecInput, toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { callToolResult, invalidInputResult } from "./results";

function tool(overrides: Partial<ToolSpecInput> = {}): ToolSpec {
  return toolSpec.parse({
    id: "word_count",
    toolset: "fixture",
    title: "Word count",
    description: "Counts the words in a text.",
    category: "enhance",
    usageHint: "When the length of a text matters.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object", properties: { words: { type: "integer" } } },
    ...overrides,
  });
}

function record(status: CallRecord["status"], result?: Partial<CallResult>): CallRecord {
  return {
    parentRunId: "run-1",
    callId: "call-1",
    toolId: "word_count",
    toolset: "fixture",
    toolVersion: "1",
    input: { text: "one two three" },
    inputHash: "hash",
    status,
    requestedBy: { id: "key-1", role: "member" },
    scheduledAt: "2025-01-01T00:00:00.000Z",
    ...(result
      ? {
          result: {
            status: status === "failed" ? "failed" : "succeeded",
            output: "3 words.",
            data: { words: 3 },
            citations: [],
            cached: false,
            stale: false,
            durationMs: 4,
            resultBytes: 12,
            truncated: false,
            completedAt: "2025-01-01T00:00:01.000Z",
            ...result,
          },
        }
      : {}),
  };
}

const IDS = { "toolbus/runId": "run-1", "toolbus/callId": "call-1" };

describe("a call as a tools/call result", () => {
  it("gives a succeeded call's data as structured content and its output as text", () => {
    const result = callToolResult(record("succeeded", {}), tool());
    expect(result).toEqual({
      content: [{ type: "text", text: "3 words." }],
      structuredContent: { words: 3 },
      isError: false,
      _meta: { ...IDS, "toolbus/status": "succeeded" },
    });
    expect(CallToolResultSchema.safeParse(result).success).toBe(true);
  });

  it("says when a fallback answered", () => {
    const fallback = { from: "word_count", to: "static_links", reason: "unavailable" };
    const result = callToolResult(record("succeeded", { fallback }), tool());
    expect(result._meta).toMatchObject({ "toolbus/fallback": fallback });
  });

  it("gives a failed call as isError with its failure in _meta and its message as text", () => {
    const failure = {
      kind: "rate_limited" as const,
      message: "word_count is rate limited; retry in 30 s.",
      retryable: true,
      retryAfterMs: 30_000,
      recovery: "replan" as const,
    };
    const result = callToolResult(record("failed", { failure, data: null, output: "" }), tool());
    expect(result).toEqual({
      content: [{ type: "text", text: failure.message }],
      isError: true,
      _meta: { ...IDS, "toolbus/status": "failed", "toolbus/failure": failure },
    });
    expect(CallToolResultSchema.safeParse(result).success).toBe(true);
  });

  it("treats a failed call without a failure record as an internal failure", () => {
    const result = callToolResult(record("failed", { output: "It broke." }), tool());
    expect(result.isError).toBe(true);
    expect(result._meta?.["toolbus/failure"]).toEqual({
      kind: "internal",
      message: "It broke.",
      retryable: false,
      recovery: "replan",
    });
  });

  it("gives a call still running as isError with its status URL and how to wait again", () => {
    for (const status of ["pending", "running"] as const) {
      const result = callToolResult(record(status), tool());
      expect(result.isError).toBe(true);
      expect(result).not.toHaveProperty("structuredContent");
      expect(result._meta).toEqual({
        ...IDS,
        "toolbus/status": status,
        "toolbus/statusUrl": "/v1/runs/run-1/calls/call-1",
      });
      const [content] = result.content;
      expect(content?.type === "text" && content.text).toContain("still running");
      // What to send back to reach this call again: its run and its id.
      expect(content?.type === "text" && content.text).toContain(JSON.stringify(IDS));
    }
  });
});

describe("input that fails validation", () => {
  const issues = [
    { path: "text", message: "Too small" },
    { path: "extra", message: "unknown field" },
  ];

  it("lists each failing path in the text and in _meta", () => {
    const result = invalidInputResult(
      tool(),
      { runId: "run-1", callId: "call-1" },
      "The input does not match word_count's input schema.",
      issues,
    );
    expect(result).toEqual({
      content: [
        {
          type: "text",
          text: [
            "The input does not match word_count's input schema.",
            "- text: Too small",
            "- extra: unknown field",
            "Fix the arguments and call the tool again.",
          ].join("\n"),
        },
      ],
      isError: true,
      _meta: { ...IDS, "toolbus/status": "rejected", "toolbus/issues": issues },
    });
  });

  it("names paths as the model sent them when the input schema was wrapped", () => {
    const wrapped = tool({ inputSchema: { type: "array" } });
    const result = invalidInputResult(wrapped, { runId: "run-1", callId: "call-1" }, "Bad.", [
      { path: "(input)", message: "Expected array" },
      { path: "0", message: "Expected string" },
    ]);
    expect(result._meta?.["toolbus/issues"]).toEqual([
      { path: "input", message: "Expected array" },
      { path: "input.0", message: "Expected string" },
    ]);
  });
});
