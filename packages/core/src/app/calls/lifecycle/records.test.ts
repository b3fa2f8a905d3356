import { Failures } from "@toolbus/wire/model/failure";
import { describe, expect, it } from "vitest";
import { failedResult, ranResult } from "./records";

const call = { scheduledAt: "2026-11-26T10:00:00.000Z" };
const now = new Date("2026-11-26T10:00:01.000Z");
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("a call's result", () => {
  it("counts resultBytes as the JSON of what a caller reads back, whoever built it", () => {
    const failure = Failures.denied("A person denied this call: not today.");
    const refused = failedResult(call, failure, now);
    expect(refused.resultBytes).toBe(
      jsonBytes({ output: failure.message, data: null, citations: [] }),
    );
    const ran = ranResult(
      call,
      { ok: true, output: "42 words", data: { words: 42 }, citations: [] },
      { cached: false, stale: false, durationMs: 3 },
      now,
    );
    expect(ran.resultBytes).toBe(
      jsonBytes({ output: "42 words", data: { words: 42 }, citations: [] }),
    );
    const failedRun = ranResult(
      call,
      { ok: false, failure },
      { cached: false, stale: false, durationMs: 3 },
      now,
    );
    expect(failedRun).toEqual({ ...refused, durationMs: 3 });
  });

  it("fails as invalid_output when the output cannot be written as JSON", () => {
    let deep: unknown = "bottom";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const result = ranResult(
      call,
      { ok: true, output: "deep", data: deep, citations: [] },
      { cached: true, stale: false, durationMs: 1 },
      now,
    );
    expect(result).toMatchObject({
      status: "failed",
      data: null,
      truncated: true,
      cached: true,
      failure: { kind: "invalid_output" },
    });
  });

  it("completes strictly after the call was scheduled, even on a clock that lags", () => {
    const lagging = new Date("2026-11-26T09:59:59.000Z");
    const result = failedResult(call, Failures.timeout("too slow"), lagging);
    expect(Date.parse(result.completedAt)).toBe(Date.parse(call.scheduledAt) + 1);
  });
});
