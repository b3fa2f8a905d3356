import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseStageConfig } from "../config";
import { testToolContext } from "../testing";
import { defineTool, ToolFailure } from "../tool-definition";
import { executeTool } from "./execute";

const config = parseStageConfig({
  tools: { echo: { prefix: ">" }, misconfigured: { limit: "lots" } },
});
const { http, secret } = testToolContext(undefined);
const context = { callId: "c1", parentRunId: "r1", config, now: () => new Date(), http, secret };

/** What the slow tool saw of its signal: whether its abort listener ran, and with what reason. */
let slowAbort: { listenerRan: boolean; reason: unknown } | undefined;

const echo = defineTool({
  spec: {
    id: "echo",
    toolset: "test",
    title: "Echo",
    description: "d",
    category: "utility",
    usageHint: "u",
    timeoutMs: 200,
  },
  input: z.object({
    text: z.string(),
    mode: z.enum(["ok", "slow", "fail", "crash", "bad"]).default("ok"),
  }),
  output: z.object({ echoed: z.string() }),
  settings: z.object({ prefix: z.string() }),
  async execute(input, { settings, signal }) {
    if (input.mode === "slow") {
      slowAbort = { listenerRan: false, reason: undefined };
      const seen = slowAbort;
      await new Promise<void>((resolve) =>
        signal.addEventListener("abort", () => {
          seen.listenerRan = true;
          seen.reason = signal.reason;
          resolve();
        }),
      );
    }
    if (input.mode === "fail") {
      throw new ToolFailure({
        kind: "upstream_error",
        message: "upstream said no",
        retryable: true,
        recovery: "replan",
      });
    }
    if (input.mode === "crash") throw new Error("secret internals");
    if (input.mode === "bad") return { output: "x", data: { echoed: 42 as unknown as string } };
    return { output: `${settings.prefix} ${input.text}`, data: { echoed: input.text } };
  },
});

describe("executing a tool", () => {
  it("returns the tool's output with the stage settings it was given", async () => {
    expect(await executeTool(echo, { text: "hi" }, context)).toEqual({
      ok: true,
      output: "> hi",
      data: { echoed: "hi" },
      citations: [],
    });
  });

  it("turns a timeout into a retryable timeout failure and aborts the tool's signal", async () => {
    slowAbort = undefined;
    const run = await executeTool(echo, { text: "hi", mode: "slow" }, context);
    expect(run).toMatchObject({
      ok: false,
      failure: { kind: "timeout", retryable: true, recovery: "replan" },
    });
    // The tool was told to stop (so it can drop its upstream requests), not just abandoned.
    expect(slowAbort).toEqual({ listenerRan: true, reason: expect.any(Error) });
  });

  it("passes a ToolFailure through as the result's failure", async () => {
    const run = await executeTool(echo, { text: "hi", mode: "fail" }, context);
    expect(run).toMatchObject({
      ok: false,
      failure: { kind: "upstream_error", message: "upstream said no" },
    });
  });

  it("hides an unexpected error's message behind an internal failure", async () => {
    const run = await executeTool(echo, { text: "hi", mode: "crash" }, context);
    expect(run).toMatchObject({ ok: false, failure: { kind: "internal" } });
    expect(JSON.stringify(run)).not.toContain("secret internals");
  });

  it("fails with invalid_output when the data breaks the output schema", async () => {
    const run = await executeTool(echo, { text: "hi", mode: "bad" }, context);
    expect(run).toMatchObject({ ok: false, failure: { kind: "invalid_output" } });
  });

  it("reports a tool whose stage settings are invalid as unavailable", async () => {
    const misconfigured = { ...echo, spec: { ...echo.spec, id: "misconfigured" } };
    const run = await executeTool(misconfigured, { text: "hi" }, context);
    expect(run).toMatchObject({ ok: false, failure: { kind: "unavailable", recovery: "replan" } });
  });
});
