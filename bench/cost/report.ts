import { percentile } from "../stats";
import type { CostCounts } from "./harness";
import { INPUT_TEXT, MEASURED_TOOL } from "./harness";
import { PRICES } from "./prices";
import type { ScenarioCost } from "./pricing";

const usd = (value: number) => `$${value < 0.1 ? value.toFixed(3) : value.toFixed(2)}`;
const num = (value: number) =>
  value === 0 ? "0" : value >= 100 ? Math.round(value).toLocaleString("en-US") : value.toFixed(2);

function quantity(value: number, unit: string): string {
  if (unit === "bytes") return `${(value / 1024).toFixed(2)} KB`;
  if (unit === "GB-s") return `${value.toFixed(4)} GB-s`;
  return `${num(value)} ${unit}`;
}

/** The markdown bench/results/cost.md holds: totals, by resource, by function, by operation. */
export function costMarkdown(
  counts: CostCounts,
  without: ScenarioCost,
  withOne: ScenarioCost,
  meta: { date: string },
): string {
  const w = counts.withoutSubscription;
  const sizes = Object.entries(w.functions)
    .map(([handler, f]) => `\`${handler}\` ${f.memoryMB} MB`)
    .join(", ");
  const resourceRows = without.resources.map((r, i) => {
    const other = withOne.resources[i];
    return `| ${r.resource} | ${quantity(r.perCall, r.unit)} | ${usd(r.usdPerMillion)} | ${other ? quantity(other.perCall, other.unit) : "—"} | ${other ? usd(other.usdPerMillion) : "—"} |`;
  });
  const functionTable = (cost: ScenarioCost) => [
    "| function | memory | invocations | billed ms | GB-s | WRU | RRU | events | log KB | $ per million |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...cost.functions.map((f) =>
      f.invocations === 0
        ? `| \`${f.handler}\` | ${f.memoryMB} MB | not invoked | | | | | | | |`
        : `| \`${f.handler}\` | ${f.memoryMB} MB | ${num(f.invocations)} | ${num(f.billedMs)} | ${f.gbSeconds.toFixed(4)} | ${num(f.writeUnits)}${f.estimatedWriteUnits > 0 ? ` + ${num(f.estimatedWriteUnits)} est.` : ""} | ${num(f.readUnits)}${f.estimatedReadUnits > 0 ? ` + ${num(f.estimatedReadUnits)} est.` : ""} | ${num(f.events)} | ${(f.logBytes / 1024).toFixed(2)} | ${usd(f.usdPerMillion)} |`,
    ),
  ];
  const operationTable = (cost: ScenarioCost) => [
    "| function | operation | requests | items | WRU | RRU | refused (est. units) |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...cost.operations.map(
      (o) =>
        `| \`${o.handler}\` | ${o.operation} | ${num(o.requests)} | ${num(o.items)} | ${num(o.writeUnits)} | ${num(o.readUnits)} | ${o.failed > 0 ? `${num(o.failed)} (${num(o.estimatedUnits)})` : "—"} |`,
    ),
  ];
  const t = (which: CostCounts["withoutSubscription"]) => {
    const s = which.tableStream;
    return `${num(s.invocations / which.calls)} invocations of \`stream\`, ${num(s.records / which.calls)} records handed over (${num(s.records / Math.max(1, s.batches))} a batch), ${num(s.filteredOut / which.calls)} filtered out`;
  };
  return [
    "# What a tool call costs on AWS",
    "",
    `Run ${meta.date}. Reproduce with \`npm run bench -- cost\`. Prices: ${PRICES.region} on-demand list prices as of ${PRICES.asOf} (bench/cost/prices.ts), no free tier.`,
    "",
    `One synchronous REST call of \`${MEASURED_TOOL}\` (${Buffer.byteLength(INPUT_TEXT)}-byte text, ${w.requestBytes}-byte request body, ${w.responseBytes}-byte answer), averaged over ${w.calls} calls on warm functions, each call's asynchronous tail (recorder, stream, subscriptions) finished before the next. Functions sized as the \`${counts.stage}\` stage deploys them (${counts.architecture}): ${sizes}.`,
    "",
    `| resource | per call | $ per million | per call, one subscription | $ per million, one subscription |`,
    "| --- | --- | --- | --- | --- |",
    ...resourceRows,
    `| **total** | | **${usd(without.totalPerMillion)}** | | **${usd(withOne.totalPerMillion)}** |`,
    "",
    "## By function, no subscription",
    "",
    ...functionTable(without),
    "",
    "## By function, one webhook subscription matching every event",
    "",
    ...functionTable(withOne),
    "",
    `Webhook deliveries: ${num(counts.withSubscription.webhook.requests / counts.withSubscription.calls)} a call. The table's change stream feeding the stage stream: ${t(w)} a call (one subscription: ${t(counts.withSubscription)}).`,
    "",
    `A call's two events were in its run's log when the API answered: a reader's first read after the answer found both for ${counts.withoutSubscription.loggedAtAnswer} of ${counts.withoutSubscription.calls} calls, and had read them ${loggedAfter(counts.withoutSubscription.loggedAfterAnswerMs)} after the answer (the read's own time). Whoever finishes a call logs it before answering; only what the recorder logs waits for a bus delivery (on AWS, EventBridge's).`,
    "",
    "## DynamoDB by operation, per call (no subscription)",
    "",
    ...operationTable(without),
    "",
    "## DynamoDB by operation, per call (one subscription)",
    "",
    ...operationTable(withOne),
    "",
    "## How it is measured, and what is approximate",
    "",
    "- Each deployed function's entry point (functions/) runs in its own worker threads, one invocation at a time per thread, with the environment the stack gives it; a function whose instances are all busy gets another, as Lambda scales out. Nothing is cached across functions or instances. The wiring table is applied to the local bus as deployed; the API is invoked with API Gateway HTTP API (2.0) events, and its synchronous Invoke of the tool's function goes to a loopback endpoint speaking Lambda's Invoke API.",
    "- DynamoDB units are what DynamoDB Local reports with `ReturnConsumedCapacity: INDEXES`, injected into every request by SDK middleware in each instance (index copies and transactions' double charge included). Refused requests (a failed condition, a cancelled transaction) report no capacity but are billed: they are estimated at one unit per item written, two in a transaction, and marked *est.*. How often two recorders race on one call (and cancel a transaction) depends on timing, so those units vary between runs; the others are deterministic.",
    "- The stage stream's function is fed as on AWS by the table's change stream (DynamoDB Streams, NEW_IMAGE), not by the bus: Lambda's event source mapping is modelled over DynamoDB Local's real stream (bench/cost/table-stream.ts), polling each shard with GetRecords from where it stood when the mapping was made, applying the run-log-entry filter with the bus's pattern matcher and invoking the function once per batch (up to 100 records, one batch at a time per shard, in order). Records the filter drops (the table's other writes) are not billed, and Lambda's GetRecords reads of a DynamoDB stream are free, so only the invocations and their duration are charged. At one call at a time each call's run-log entry is its own batch: one invocation a call.",
    "- Lambda duration is measured around each handler call in the instance and rounded up to 1 ms, times the function's memory; durations on this machine stand in for Lambda's (arm64 at these memory sizes may run slower or faster). Cold starts (and their billed init phase) are not counted: the functions are warm.",
    "- Log bytes are what the functions write (console lines with Lambda's time, request and level prefix) plus Lambda's START, END and REPORT lines (with an X-Ray segment when the stage traces), as ingested bytes; CloudWatch's per-event overhead is not added.",
    "- Reads that a warm instance makes at most once a second or so (the subscriptions fan-out asking whether subscriptions changed, a key's check) are shared by the calls in that interval: per call they depend on the call rate (here, one call at a time, a few a second).",
    "- Not included: the timed jobs (sweeper, deliveries' retry driver: each one invocation a minute per stage), X-Ray traces, KMS, SSM reads at a cold start, storage, data transfer, and the dashboard and alarms.",
    "",
  ].join("\n");
}

/** "p50 X ms, at most Y ms" of the times each call's events took to be logged. */
function loggedAfter(times: readonly number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(1)} ms, at most ${(sorted.at(-1) ?? 0).toFixed(1)} ms`;
}
