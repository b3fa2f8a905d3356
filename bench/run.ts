import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { join } from "node:path";
import { benchBus } from "./bus";
import { benchCalls } from "./calls";
import { benchLoad } from "./load";
import { benchMatcher } from "./matcher";
import type { Measurement } from "./stats";

const RESULTS = join(import.meta.dirname, "results");

function format(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString("en-US") : value.toFixed(2);
}

function ratio(value: number): string {
  return value < 0.1 ? value.toPrecision(2) : value.toFixed(2);
}

function markdown(measurements: Measurement[], meta: Record<string, string>): string {
  const rows = measurements.map(
    (m) =>
      `| ${m.name} | ${format(m.value)} ${m.unit} | ${format(m.baseline.value)} ${m.unit} (${m.baseline.name}) | ${ratio(m.ratio)}x (${m.better} is better) |`,
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

async function main(): Promise<void> {
  const measurements = [
    ...(await benchBus()),
    ...benchMatcher(),
    ...(await benchCalls()),
    ...(await benchLoad()),
  ];
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    machine: `${cpus().length} x ${cpus()[0]?.model ?? "cpu"}`,
  };
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
