import { describe, expect, it } from "vitest";
import { formatTraceparent, newSpanId, newTrace, parseTraceparent } from "./trace-context";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

describe("traceparent", () => {
  it("reads the spec's example", () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toEqual({
      traceId: TRACE,
      parentId: PARENT,
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`)?.sampled).toBe(false);
  });

  it("reads a future version's first four fields and ignores what follows", () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-what-comes-later`)?.traceId).toBe(TRACE);
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["uppercase", `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ["short trace id", `00-${TRACE.slice(1)}-${PARENT}-01`],
    ["zero trace id", `00-${"0".repeat(32)}-${PARENT}-01`],
    ["zero parent id", `00-${TRACE}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${TRACE}-${PARENT}-01`],
    ["version 00 with a fifth field", `00-${TRACE}-${PARENT}-01-extra`],
    ["not hex", `00-${TRACE.replace("4", "g")}-${PARENT}-01`],
    ["huge", `00-${TRACE}-${PARENT}-01-${"x".repeat(10_000_000)}`],
    ["NUL and a lone surrogate", `00-${TRACE}\u0000-${PARENT}-01\ud800`],
  ])("refuses a header that is %s", (_name, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it("starts new traces with random, non-zero ids and formats them back", () => {
    const trace = newTrace();
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(trace.traceId).not.toBe(newTrace().traceId);
    const span = newSpanId();
    const header = formatTraceparent(trace, span);
    expect(parseTraceparent(header)).toEqual({
      traceId: trace.traceId,
      parentId: span,
      sampled: false,
    });
  });
});
