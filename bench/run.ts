import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { join } from "node:path";
import { benchBundles } from "./bundles";
import { benchBus } from "./bus";
import { benchCalls } from "./calls";
import { benchCost } from "./cost";
import { benchFastPath } from "./fast-path";
import { benchJvm } from "./jvm";
import { benchLoad } from "./load";
import { benchMatcher } from "./matcher";
import { benchParsers } from "./parsers";
import { benchRegisteredCalls, benchValidation } from "./registered";
import { benchSearch } from "./search";
import { benchSearchReal } from "./search-real";
import type { Measurement } from "./stats";
import { benchStreams } from "./streams";

const RESULTS = join(import.meta.dirname, "results");

function format(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString("en-US") : value.toFixed(2);
}

function ratio(value: number): string {
  // A count against a baseline of zero (lost calls, say) has no ratio.
  if (!Number.isFinite(value)) return "n/a";
  return `${value < 0.1 ? value.toPrecision(2) : value.toFixed(2)}x`;
}

function markdown(measurements: Measurement[], meta: Record<string, string>): string {
  const rows = measurements.map(
    (m) =>
      `| ${m.name} | ${format(m.value)} ${m.unit} | ${format(m.baseline.value)} ${m.unit} (${m.baseline.name}) | ${ratio(m.ratio)} (${m.better} is better) |`,
  );
  return [
    "# Toolbus benchmarks",
    "",
    `Run ${meta.date} on ${meta.machine}, Node ${meta.node}. Reproduce with \`npm run bench\`.`,
    "",
    "| measurement | value | baseline (same run) | ratio |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

/** Each group in the order they run; `npm run bench -- <group>...` runs only those. */
const GROUPS: Record<string, () => Measurement[] | Promise<Measurement[]>> = {
  fastpath: benchFastPath,
  bus: benchBus,
  matcher: benchMatcher,
  search: benchSearch,
  "search-real": benchSearchReal,
  calls: benchCalls,
  load: benchLoad,
  validation: benchValidation,
  registered: benchRegisteredCalls,
  parsers: benchParsers,
  streams: benchStreams,
  bundles: benchBundles,
  cost: benchCost,
  jvm: benchJvm,
};

async function main(): Promise<void> {
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !(name in GROUPS));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown group(s) ${unknown.join(", ")}: use ${Object.keys(GROUPS).join(", ")}.`,
    );
  }
  const measurements: Measurement[] = [];
  for (const [name, bench] of Object.entries(GROUPS)) {
    if (selected.length === 0 || selected.includes(name)) measurements.push(...(await bench()));
  }
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    machine: `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}`,
  };
  if (selected.length > 0) {
    // A partial run: printed only, so bench/results always holds one complete run.
    process.stdout.write(markdown(measurements, meta));
    return;
  }
  await mkdir(RESULTS, { recursive: true });
  await writeFile(
    join(RESULTS, "latest.json"),
    `${JSON.stringify({ ...meta, measurements }, null, 2)}\n`,
  );
  const report = markdown(measurements, meta);
  await writeFile(join(RESULTS, "latest.md"), report);
  process.stdout.write(report);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
