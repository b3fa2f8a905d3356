/**
 * The architecture's figures for a checkout: import cycles, the application layer's forbidden
 * imports, where each service is constructed, who builds failed results, lines in core, and
 * (unless --static) the files one call passes through at run time (call-trace.ts).
 *
 *   node --import tsx scripts/architecture/report.ts [checkout root] [--static] [--files]
 *
 * --files lists the files the call visits. Run it on the checkout before and after a change
 * to compare them.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { type CallTrace, type PathFigures, pathFigures, TRACE_LINE, through } from "./call-trace";
import { readSourceGraph, type SourceGraph } from "./imports";
import {
  appLayerViolations,
  cyclesOf,
  describeLayerViolations,
  failedResultBuilders,
  linesUnder,
  packageOf,
  serviceConstructions,
} from "./rules";

const HERE = resolve(import.meta.dirname, "../..");

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const root = resolve(args.find((arg) => !arg.startsWith("--")) ?? HERE);
  const graph = readSourceGraph(root);
  const out: string[] = [`Architecture of ${root}`, ""];
  out.push(...staticFigures(graph));
  if (!args.includes("--static")) {
    out.push("", ...traceFigures(await traceCall(root), graph, args.includes("--files")));
  }
  console.log(out.join("\n"));
}

function staticFigures(graph: SourceGraph): string[] {
  const out: string[] = [];
  const cycles = cyclesOf(graph);
  out.push(`Import cycles (groups of files that import each other): ${cycles.length}`);
  for (const cycle of cycles) out.push(`  ${cycle.join(" <-> ")}`);

  const reaches = describeLayerViolations(appLayerViolations(graph));
  out.push("", `Forbidden imports from the application layer: ${reaches.length}`);
  for (const reach of reaches) out.push(`  ${reach}`);

  out.push("", "Places that construct each application service (non-test files, `new` sites):");
  for (const entry of serviceConstructions(graph)) {
    out.push(
      `  ${entry.service.padEnd(24)} ${String(entry.files.length).padStart(2)} files` +
        `  ${String(entry.sites.length).padStart(2)} sites` +
        (entry.files.length === 1 ? "" : `  ${entry.files.join(", ") || "(none)"}`),
    );
  }

  const builders = failedResultBuilders(graph).modules;
  out.push("", `Modules that build a failed CallResult in place: ${builders.length}`);
  for (const module of builders) out.push(`  ${module.file} (lines ${module.lines.join(", ")})`);

  const core = linesUnder(graph, "packages/core/src");
  const all = [...graph.modules.values()].reduce((sum, module) => sum + module.lines, 0);
  const share = Math.round((core.lines / all) * 100);
  out.push(
    "",
    `Lines in packages/core/src (non-test): ${core.lines} in ${core.files} files, ` +
      `${share}% of the ${all} lines of non-test source`,
  );
  out.push("", "Lines per workspace package (non-test source):");
  const packages = new Set([...graph.modules.keys()].map(packageOf).filter((name) => name));
  for (const name of [...packages].sort()) {
    const { lines, files } = linesUnder(graph, `packages/${name}/src`);
    out.push(`  ${String(name).padEnd(8)} ${String(lines).padStart(6)} lines in ${files} files`);
  }
  return out;
}

/** Runs call-trace.ts on `root` in a process of its own (its module hooks stay there). */
async function traceCall(root: string): Promise<CallTrace> {
  const script = resolve(import.meta.dirname, "call-trace.ts");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", script, root],
    { cwd: HERE, maxBuffer: 256 * 1024 * 1024 },
  );
  const line = stdout.split("\n").find((text) => text.startsWith(TRACE_LINE));
  if (!line) throw new Error(`The call trace printed no result:\n${stdout.slice(-2_000)}`);
  return JSON.parse(line.slice(TRACE_LINE.length)) as CallTrace;
}

function traceFigures(trace: CallTrace, graph: SourceGraph, listFiles: boolean): string[] {
  const tool = toolModule(graph, trace.tool);
  const legs: [string, PathFigures][] = [
    [
      `route to the tool (${tool ?? "its module not found"})`,
      pathFigures(through(trace.answered.sequence, tool ?? "")),
    ],
    ["route to the answer", pathFigures(trace.answered.sequence)],
    ["route until the system settled", pathFigures(trace.settled.sequence)],
  ];
  const out = [
    `One synchronous REST call of ${trace.tool}, after a warm-up call, files under packages/ and functions/:`,
  ];
  for (const [leg, figures] of legs) {
    out.push(
      `  ${leg}: ${figures.files.length} files, ${figures.transitions} moves between files, ` +
        `${figures.returns} back to a file already left (${figures.distinctReturns} distinct)`,
    );
  }
  if (listFiles) {
    const [, answer] = legs[1] as [string, PathFigures];
    out.push("  files, in the order first entered (route to the answer):");
    for (const file of answer.files) out.push(`    ${file}`);
  }
  return out;
}

/** The module that defines the tool (its spec's `id`), where "reaching the tool" is measured. */
function toolModule(graph: SourceGraph, tool: string): string | undefined {
  const declares = new RegExp(`\\bid:\\s*"${tool}"`);
  return [...graph.modules.keys()].find(
    (file) =>
      file.startsWith("packages/tools/src/") &&
      declares.test(readFileSync(resolve(graph.root, file), "utf8")),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
