import type { Metrics } from "../schemas.js";
import { table } from "./format.js";

/** Per-tool counter columns, in the order an operator reads them: volume, outcome, why. */
const COLUMNS = [
  ["CALLS", "calls"],
  ["OK", "succeeded"],
  ["FAILED", "failed"],
  ["CACHE HIT", "cacheHits"],
  ["STALE", "cacheStale"],
  ["MISS", "cacheMisses"],
  ["RATE LIMITED", "rateLimited"],
  ["FALLBACK", "fallbacks"],
] as const;

/**
 * `toolbus stats`: one row per tool with its counters and latency, then failures by kind; or,
 * where the server counts nothing itself (AWS), where the metrics are.
 */
export function statsReport(metrics: Metrics): string {
  if (metrics.source === "cloudwatch") {
    const where = metrics.cloudwatch;
    const stage = where?.dimensions.stage;
    const dimensions = Object.entries(where?.dimensions ?? {})
      .map(([name, value]) => `${name}=${value}`)
      .join(", ");
    return [
      "Each tool's function counts its own calls: the metrics are in CloudWatch,",
      `namespace ${where?.namespace ?? "Toolbus"}${dimensions ? ` (${dimensions})` : ""}.`,
      ...(stage ? [`The stage's dashboard is toolbus-${stage}.`] : []),
      "",
    ].join("\n");
  }
  const counters = metrics.counters ?? [];
  const byTool = new Map<string, Map<string, number>>();
  const failures = new Map<string, number>();
  for (const counter of counters) {
    const { toolId, failureKind } = counter.dimensions;
    if (failureKind) failures.set(failureKind, (failures.get(failureKind) ?? 0) + counter.value);
    if (!toolId) continue;
    const row = byTool.get(toolId) ?? new Map<string, number>();
    row.set(counter.name, (row.get(counter.name) ?? 0) + counter.value);
    byTool.set(toolId, row);
  }
  const latency = new Map(
    (metrics.latencies ?? [])
      .filter((entry) => entry.name === "duration" && entry.dimensions.toolId)
      .map((entry) => [entry.dimensions.toolId, entry]),
  );
  const head = `Calls this server ran${metrics.since ? ` since ${metrics.since}` : ""}.\n\n`;
  if (byTool.size === 0) return `${head}No calls yet.\n`;
  const rows = [...byTool.keys()].sort().map((toolId) => {
    const row = byTool.get(toolId);
    const times = latency.get(toolId);
    return [
      toolId,
      ...COLUMNS.map(([, name]) => String(row?.get(name) ?? 0)),
      times ? String(times.p50) : "-",
      times ? String(times.p99) : "-",
    ];
  });
  const tools = table(["TOOL", ...COLUMNS.map(([title]) => title), "P50 MS", "P99 MS"], rows);
  const kinds =
    failures.size === 0
      ? ""
      : `\n${table(
          ["FAILURE KIND", "CALLS"],
          [...failures]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([kind, n]) => [kind, String(n)]),
        )}`;
  return `${head}${tools}${kinds}`;
}
