import type { CallRecord, CallResult } from "@toolbus/wire/model/call";

/**
 * Call metrics. On AWS each function writes them in CloudWatch's embedded metric format
 * (EMF: a JSON log line that CloudWatch turns into metrics, no API call, no extra latency);
 * under `npm start` the same points also feed counters and latency percentiles kept in the
 * process, which `GET /v1/metrics` returns.
 */

export type Dimensions = Readonly<Record<string, string>>;

export interface MetricPoint {
  name: string;
  unit: "Count" | "Milliseconds";
  value: number;
  /** Besides the stage: which slices of the metric CloudWatch keeps (tool, failure kind). */
  dimensions: Dimensions;
}

export interface MetricsSink {
  record(points: readonly MetricPoint[]): void;
}

export const METRICS_NAMESPACE = "Toolbus";

/**
 * One EMF line per `record`: points that share dimensions share a directive. CloudWatch
 * reads the values from the root of the object, so a line's points must agree on every
 * dimension they have in common, which a call's points do.
 */
export function emfMetrics(
  write: (line: string) => void,
  stage: string,
  now: () => number = Date.now,
): MetricsSink {
  return {
    record(points) {
      if (points.length === 0) return;
      const root: Record<string, unknown> = { stage };
      const directives = new Map<string, { dims: string[]; metrics: Map<string, string> }>();
      for (const point of points) {
        const dims = ["stage", ...Object.keys(point.dimensions).sort()];
        Object.assign(root, point.dimensions);
        const key = dims.join(",");
        const directive = directives.get(key) ?? { dims, metrics: new Map() };
        directive.metrics.set(point.name, point.unit);
        directives.set(key, directive);
        root[point.name] = ((root[point.name] as number | undefined) ?? 0) + point.value;
      }
      write(
        JSON.stringify({
          _aws: {
            Timestamp: now(),
            CloudWatchMetrics: [...directives.values()].map(({ dims, metrics }) => ({
              Namespace: METRICS_NAMESPACE,
              Dimensions: [dims],
              Metrics: [...metrics].map(([Name, Unit]) => ({ Name, Unit })),
            })),
          },
          ...root,
        }),
      );
    },
  };
}

/** Counters and latency percentiles since the process started: what `GET /v1/metrics` shows. */
export interface MetricsSnapshot {
  since: string;
  counters: Array<{ name: string; dimensions: Dimensions; value: number }>;
  latencies: Array<{
    name: string;
    dimensions: Dimensions;
    count: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }>;
}

/** Samples kept per latency series: enough for a p99, bounded however long the process runs. */
const RESERVOIR = 2048;

export class InProcessMetrics implements MetricsSink {
  readonly #since: string;
  readonly #counters = new Map<string, { name: string; dimensions: Dimensions; value: number }>();
  readonly #latencies = new Map<
    string,
    { name: string; dimensions: Dimensions; count: number; max: number; samples: number[] }
  >();
  readonly #random: () => number;

  constructor(now: () => Date = () => new Date(), random: () => number = Math.random) {
    this.#since = now().toISOString();
    this.#random = random;
  }

  record(points: readonly MetricPoint[]): void {
    for (const point of points) {
      const key = `${point.name}|${JSON.stringify(Object.entries(point.dimensions).sort())}`;
      if (point.unit === "Count") {
        const counter = this.#counters.get(key) ?? { ...pick(point), value: 0 };
        counter.value += point.value;
        this.#counters.set(key, counter);
        continue;
      }
      const series = this.#latencies.get(key) ?? { ...pick(point), count: 0, max: 0, samples: [] };
      series.count++;
      series.max = Math.max(series.max, point.value);
      // Reservoir sampling (Vitter's algorithm R): every sample equally likely to be kept.
      if (series.samples.length < RESERVOIR) series.samples.push(point.value);
      else {
        const slot = Math.floor(this.#random() * series.count);
        if (slot < RESERVOIR) series.samples[slot] = point.value;
      }
      this.#latencies.set(key, series);
    }
  }

  snapshot(): MetricsSnapshot {
    return {
      since: this.#since,
      counters: [...this.#counters.values()].map((c) => ({ ...c })),
      latencies: [...this.#latencies.values()].map(({ samples, ...series }) => {
        const sorted = [...samples].sort((a, b) => a - b);
        return {
          ...series,
          p50: percentile(sorted, 0.5),
          p90: percentile(sorted, 0.9),
          p99: percentile(sorted, 0.99),
        };
      }),
    };
  }
}

const pick = (point: MetricPoint) => ({ name: point.name, dimensions: { ...point.dimensions } });

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}

/**
 * A finished call as metric points, by tool: calls and their duration, failures by kind,
 * how the cache answered, rate-limited calls, fallbacks, and how the call was dispatched.
 * The one place that decides what a call counts as.
 */
export function callMetricPoints(
  call: CallRecord,
  tool: { cacheable: boolean } = { cacheable: false },
): MetricPoint[] {
  const result = call.result;
  if (!result) return [];
  const byTool = { toolId: call.toolId };
  const count = (name: string, dimensions: Dimensions = byTool): MetricPoint => ({
    name,
    unit: "Count",
    value: 1,
    dimensions,
  });
  const points: MetricPoint[] = [
    count("calls"),
    count(result.status === "succeeded" ? "succeeded" : "failed"),
    { name: "duration", unit: "Milliseconds", value: result.durationMs, dimensions: byTool },
    count(call.dispatch === "direct" ? "dispatchedDirect" : "dispatchedByBus"),
  ];
  if (result.failure) points.push(count("failures", { failureKind: result.failure.kind }));
  if (result.failure?.kind === "rate_limited") points.push(count("rateLimited"));
  const cache = cacheStatus(result, tool.cacheable);
  if (cache !== "none") points.push(count(CACHE_METRIC[cache]));
  if (result.fallback) points.push(count("fallbacks"));
  return points;
}

export type CacheStatus = "hit" | "stale" | "miss" | "none";

const CACHE_METRIC = { hit: "cacheHits", stale: "cacheStale", miss: "cacheMisses" } as const;

/**
 * How the cache answered a call. Only a tool with a cache policy has a hit ratio; a stale
 * answer is a hit that saved a failure, counted apart.
 */
export function cacheStatus(result: CallResult, cacheable: boolean): CacheStatus {
  if (result.cached) return result.stale ? "stale" : "hit";
  return cacheable ? "miss" : "none";
}
