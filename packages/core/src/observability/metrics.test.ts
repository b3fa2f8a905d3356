import type { CallRecord, CallResult } from "@toolbus/wire/model/call";
import { describe, expect, it } from "vitest";
import { callMetricPoints, emfMetrics, InProcessMetrics, type MetricPoint } from "./metrics";

const call = (result: Partial<CallResult>, extra: Partial<CallRecord> = {}): CallRecord => ({
  parentRunId: "run-1",
  callId: "call-1",
  toolId: "web_search",
  toolset: "research",
  toolVersion: "1",
  input: {},
  inputHash: "h",
  requestedBy: { id: "key-1", role: "member" },
  scheduledAt: "2026-11-24T10:00:00.000Z",
  status: result.status ?? "succeeded",
  result: {
    status: "succeeded",
    output: "ok",
    data: null,
    citations: [],
    cached: false,
    stale: false,
    durationMs: 40,
    resultBytes: 2,
    truncated: false,
    completedAt: "2026-11-24T10:00:01.000Z",
    ...result,
  },
  ...extra,
});

const names = (points: MetricPoint[]) => points.map((p) => p.name).sort();

describe("call metrics", () => {
  it("counts a cache miss only for a tool that has a cache", () => {
    expect(names(callMetricPoints(call({}), { cacheable: true }))).toEqual(
      ["cacheMisses", "calls", "dispatchedByBus", "duration", "succeeded"].sort(),
    );
    expect(names(callMetricPoints(call({})))).not.toContain("cacheMisses");
  });

  it("counts failures by kind, rate limits, stale answers, fallbacks and direct dispatch", () => {
    const limited = callMetricPoints(
      call({
        status: "failed",
        failure: { kind: "rate_limited", message: "m", retryable: true, recovery: "replan" },
      }),
    );
    expect(limited).toContainEqual({
      name: "failures",
      unit: "Count",
      value: 1,
      dimensions: { failureKind: "rate_limited" },
    });
    expect(names(limited)).toContain("rateLimited");
    const stale = callMetricPoints(
      call(
        { cached: true, stale: true, fallback: { from: "a", to: "b", reason: "r" } },
        { dispatch: "direct" },
      ),
    );
    expect(names(stale)).toEqual(
      expect.arrayContaining(["cacheStale", "fallbacks", "dispatchedDirect"]),
    );
  });

  it("writes one EMF line CloudWatch can read: every metric's value at the root", () => {
    const lines: string[] = [];
    emfMetrics(
      (line) => lines.push(line),
      "dev",
      () => 1_795_000_000_000,
    ).record(
      callMetricPoints(
        call({
          status: "failed",
          failure: { kind: "timeout", message: "m", retryable: true, recovery: "replan" },
        }),
      ),
    );
    const emf = JSON.parse(lines[0] ?? "");
    expect(emf).toMatchObject({
      stage: "dev",
      toolId: "web_search",
      failureKind: "timeout",
      calls: 1,
      failed: 1,
      failures: 1,
      duration: 40,
    });
    expect(emf._aws.Timestamp).toBe(1_795_000_000_000);
    const directives = emf._aws.CloudWatchMetrics as Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
    expect(directives).toContainEqual({
      Namespace: "Toolbus",
      Dimensions: [["stage", "failureKind"]],
      Metrics: [{ Name: "failures", Unit: "Count" }],
    });
    for (const directive of directives)
      for (const metric of directive.Metrics) expect(emf[metric.Name]).toEqual(expect.any(Number));
  });

  it("keeps counters and latency percentiles in the process", () => {
    const metrics = new InProcessMetrics(() => new Date("2026-11-24T10:00:00.000Z"));
    for (let ms = 1; ms <= 100; ms++) metrics.record(callMetricPoints(call({ durationMs: ms })));
    const snapshot = metrics.snapshot();
    expect(snapshot.since).toBe("2026-11-24T10:00:00.000Z");
    expect(snapshot.counters).toContainEqual({
      name: "calls",
      dimensions: { toolId: "web_search" },
      value: 100,
    });
    expect(snapshot.latencies).toEqual([
      {
        name: "duration",
        dimensions: { toolId: "web_search" },
        count: 100,
        max: 100,
        p50: 50,
        p90: 90,
        p99: 99,
      },
    ]);
  });

  it("bounds the samples it keeps however many calls it sees", () => {
    // A draw that never replaces a kept sample: the reservoir keeps the first 2,048 durations,
    // so the percentiles come from those while count and max see every call.
    const metrics = new InProcessMetrics(undefined, () => 0.999_999);
    for (let ms = 1; ms <= 10_000; ms++) metrics.record(callMetricPoints(call({ durationMs: ms })));
    const [latency] = metrics.snapshot().latencies;
    expect(latency).toMatchObject({ count: 10_000, max: 10_000, p50: 1024, p99: 2028 });
  });
});
