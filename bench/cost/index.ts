import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Measurement, measurement, percentile } from "../stats";
import { measureCostCounts } from "./harness";
import { REFERENCES } from "./prices";
import { priceScenario } from "./pricing";
import { costMarkdown } from "./report";

export { type CostCounts, measureCostCounts, type ScenarioCounts } from "./harness";
export type { FunctionCounts } from "./instances";
export { priceScenario } from "./pricing";

const RESULTS = join(import.meta.dirname, "..", "results");

/**
 * The AWS-path cost of a synchronous tool call: counted by running the functions' entry points
 * as separate instances (harness.ts), priced with the dated table (prices.ts). Writes the
 * breakdown to bench/results/cost.md.
 */
export async function benchCost(): Promise<Measurement[]> {
  const counts = await measureCostCounts();
  const without = priceScenario(counts.withoutSubscription);
  const withOne = priceScenario(counts.withSubscription);
  await mkdir(RESULTS, { recursive: true });
  await writeFile(
    join(RESULTS, "cost.md"),
    costMarkdown(counts, without, withOne, { date: new Date().toISOString() }),
  );
  const perCall = (cost: typeof without, resource: string) =>
    cost.resources.find((r) => r.resource.startsWith(resource))?.perCall ?? Number.NaN;
  const agentCore = {
    name: REFERENCES.agentCoreGateway.name,
    value: REFERENCES.agentCoreGateway.perMillion,
  };
  const logged = [...counts.withoutSubscription.loggedAfterAnswerMs].sort((a, b) => a - b);
  const withinASecond = { name: "the target: within 1 s of the answer", value: 1_000 };
  return [
    measurement(
      "AWS path: a sync call's events read from its run's log after its answer (logged before the answer; the read's own time), p50",
      "ms",
      percentile(logged, 50),
      withinASecond,
      "lower",
    ),
    measurement(
      "AWS path: a sync call's events read from its run's log after its answer (logged before the answer; the read's own time), max",
      "ms",
      logged.at(-1) ?? Number.NaN,
      withinASecond,
      "lower",
    ),
    measurement(
      "AWS cost per million sync calls, no subscription",
      "$",
      without.totalPerMillion,
      agentCore,
      "lower",
    ),
    measurement(
      "AWS cost per million sync calls, one webhook subscription",
      "$",
      withOne.totalPerMillion,
      agentCore,
      "lower",
    ),
    measurement(
      "DynamoDB write units per sync call, no subscription",
      "WRU",
      perCall(without, "DynamoDB write units"),
      { name: "the issue's count before the cuts", value: 29 },
      "lower",
    ),
    measurement(
      "Lambda invocations per sync call, no subscription",
      "invocations",
      perCall(without, "Lambda invocations"),
      { name: "the issue's count before the cuts", value: 8 },
      "lower",
    ),
  ];
}
