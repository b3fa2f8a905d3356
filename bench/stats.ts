/** Small helpers shared by the benchmarks: percentiles and ratio formatting. */

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)] ?? Number.NaN;
}

export interface Measurement {
  name: string;
  unit: string;
  value: number;
  /** The baseline's value in the same unit, measured in the same run. */
  baseline: { name: string; value: number };
  /** value / baseline. For latencies lower is better, for throughput higher is better. */
  ratio: number;
  better: "higher" | "lower";
}

export function measurement(
  name: string,
  unit: string,
  value: number,
  baseline: { name: string; value: number },
  better: "higher" | "lower",
): Measurement {
  return { name, unit, value, baseline, ratio: value / baseline.value, better };
}

export async function runConcurrently(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await task(next++);
    }),
  );
}
