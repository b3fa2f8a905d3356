import type { ToolResultReceived } from "@toolbus/wire/model/events";
import { describe, expect, it } from "vitest";
import { detailBytes, fitResultEvent, MAX_EVENT_DETAIL_BYTES, PREVIEW_CHARS } from "./size";

const result = (output: string, data: unknown): ToolResultReceived => ({
  eventKey: "r/c/result",
  parentRunId: "r",
  callId: "c",
  toolId: "t",
  toolset: "s",
  status: "succeeded",
  output,
  data,
  citations: [],
  cached: false,
  stale: false,
  durationMs: 1,
  resultBytes: 0,
  truncated: false,
  completedAt: "2026-11-21T10:00:00.000Z",
  resultOmitted: false,
});

describe("the result event size guard", () => {
  it("leaves a result that fits untouched", () => {
    const small = result("ok", { n: 1 });
    expect(fitResultEvent(small)).toBe(small);
  });

  it("replaces an oversize result by a preview and marks it omitted", () => {
    const big = result("x".repeat(300_000), { blob: "y".repeat(300_000) });
    const fitted = fitResultEvent(big);
    expect(fitted.resultOmitted).toBe(true);
    expect(fitted.output).toHaveLength(PREVIEW_CHARS);
    expect(fitted.data).toBeNull();
    expect(detailBytes(fitted)).toBeLessThanOrEqual(MAX_EVENT_DETAIL_BYTES);
  });

  it("leaves an oversize result's content blocks out rather than cutting an image short", () => {
    const image = { type: "image" as const, data: "A".repeat(280_000), mimeType: "image/png" };
    const fitted = fitResultEvent({ ...result("a picture", null), content: [image] });
    expect(fitted.resultOmitted).toBe(true);
    expect(fitted.content).toBeUndefined();
    expect(fitted.output).toBe("a picture");
    expect(detailBytes(fitted)).toBeLessThanOrEqual(MAX_EVENT_DETAIL_BYTES);
  });
});
