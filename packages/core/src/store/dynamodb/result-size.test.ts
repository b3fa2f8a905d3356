import type { CallResult } from "@toolbus/wire/model/call";
import { describe, expect, it } from "vitest";
import { fitResult, jsonBytes, truncateOutput } from "./result-size";

const result = (overrides: Partial<CallResult>): CallResult => ({
  status: "succeeded",
  output: "ok",
  data: { ok: true },
  citations: [],
  cached: false,
  stale: false,
  durationMs: 1,
  resultBytes: 10,
  truncated: false,
  completedAt: "2026-01-01T00:00:00.000Z",
  ...overrides,
});

describe("fitResult", () => {
  it("returns a result that fits unchanged", () => {
    const small = result({});
    expect(fitResult(small, 10_000)).toBe(small);
  });

  it("drops data first and marks the result truncated", () => {
    const fitted = fitResult(result({ data: "d".repeat(5_000) }), 1_000);
    expect(fitted).toMatchObject({ output: "ok", data: null, truncated: true });
  });

  it("cuts output with a note when dropping data is not enough", () => {
    const fitted = fitResult(result({ output: '\n"'.repeat(10_000) }), 5_000);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(5_000);
    expect(fitted.output).toMatch(/\[output truncated: \d+ of 20000 bytes kept\]$/);
  });

  it("drops citations when they leave too little room for any output", () => {
    const citations = Array.from({ length: 500 }, (_, index) => ({ url: `https://e.x/${index}` }));
    const fitted = fitResult(result({ output: "o".repeat(20_000), citations }), 8_000);
    expect(fitted.citations).toEqual([]);
    expect(fitted.output.length).toBeGreaterThan(1_000);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(8_000);
  });
});

describe("truncateOutput", () => {
  it("never splits a surrogate pair", () => {
    const cut = truncateOutput("😀".repeat(1_000), 200);
    const head = cut.slice(0, cut.indexOf("\n["));
    expect(head).toBe("😀".repeat(head.length / 2));
    expect(jsonBytes(cut)).toBeLessThanOrEqual(200);
  });
});
