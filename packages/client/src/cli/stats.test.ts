import { describe, expect, it } from "vitest";
import { statsReport } from "./stats.js";

describe("statsReport", () => {
  it("sums failures by kind across tools, and leaves tools without latency at '-'", () => {
    const text = statsReport({
      source: "process",
      since: "2026-11-24T10:00:00.000Z",
      counters: [
        { name: "calls", dimensions: { toolId: "b_tool" }, value: 3 },
        { name: "failed", dimensions: { toolId: "b_tool" }, value: 2 },
        { name: "calls", dimensions: { toolId: "a_tool" }, value: 1 },
        { name: "rateLimited", dimensions: { toolId: "a_tool" }, value: 1 },
        { name: "failures", dimensions: { failureKind: "timeout" }, value: 2 },
        { name: "failures", dimensions: { failureKind: "rate_limited" }, value: 1 },
      ],
      latencies: [
        {
          name: "duration",
          dimensions: { toolId: "b_tool" },
          count: 3,
          p50: 12,
          p90: 30,
          p99: 41,
          max: 41,
        },
      ],
    });
    const rows = text.split("\n").map((line) => line.split(/\s{2,}/));
    expect(rows.find((row) => row[0] === "a_tool")).toEqual([
      "a_tool",
      "1",
      "0",
      "0",
      "0",
      "0",
      "0",
      "1",
      "0",
      "-",
      "-",
    ]);
    expect(rows.find((row) => row[0] === "b_tool")?.slice(1, 4)).toEqual(["3", "0", "2"]);
    expect(rows.find((row) => row[0] === "b_tool")?.slice(-2)).toEqual(["12", "41"]);
    // Tools in name order, then the failure kinds in name order.
    const names = rows.map((row) => row[0]);
    expect(names.indexOf("a_tool")).toBeLessThan(names.indexOf("b_tool"));
    expect(rows.filter((row) => row.length === 2 && /^[a-z_]+$/.test(row[0] ?? ""))).toEqual([
      ["rate_limited", "1"],
      ["timeout", "2"],
    ]);
  });

  it("says so when nothing was called yet", () => {
    expect(statsReport({ source: "process", counters: [] })).toBe(
      "Calls this server ran.\n\nNo calls yet.\n",
    );
  });
});
