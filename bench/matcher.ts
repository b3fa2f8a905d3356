import { performance } from "node:perf_hooks";
import { type CompiledPattern, compilePattern } from "../packages/core/src/pattern";
import { type Measurement, measurement } from "./stats";

const PATTERNS = 1_000;
const EVENTS = 200;

/** A realistic mix: exact, prefix, numeric, anything-but, exists, wildcard and $or rules. */
function pattern(i: number): object {
  const tool = `tool_${i % 50}`;
  switch (i % 7) {
    case 0:
      return {
        source: ["toolbus"],
        "detail-type": ["ToolCallScheduled"],
        detail: { toolId: [tool] },
      };
    case 1:
      return { detail: { parentRunId: [{ prefix: `run-${i % 10}` }] } };
    case 2:
      return { detail: { durationMs: [{ numeric: [">", i % 500, "<=", 1000] }] } };
    case 3:
      return { detail: { status: [{ "anything-but": ["succeeded"] }], toolId: [tool] } };
    case 4:
      return { detail: { failure: { kind: [{ exists: true }] } } };
    case 5:
      return { detail: { toolset: [{ wildcard: `set*${i % 9}` }] } };
    default:
      return { $or: [{ detail: { toolId: [tool] } }, { detail: { cached: [true] } }] };
  }
}

function event(i: number) {
  return {
    version: "0",
    id: `e${i}`,
    "detail-type": i % 2 ? "ToolCallScheduled" : "ToolResultReceived",
    source: "toolbus",
    account: "000000000000",
    time: "2026-11-21T10:00:00Z",
    region: "us-east-1",
    resources: [],
    detail: {
      toolId: `tool_${i % 60}`,
      toolset: `set_${i % 13}`,
      parentRunId: `run-${i % 17}`,
      status: i % 3 ? "succeeded" : "failed",
      durationMs: (i * 37) % 1200,
      cached: i % 5 === 0,
      ...(i % 4 === 0 ? { failure: { kind: "timeout" } } : {}),
    },
  };
}

function timeEvaluations(test: (e: object) => number, events: object[]): number {
  for (const e of events) test(e); // warm-up
  let evaluations = 0;
  let rounds = 0;
  const started = performance.now();
  while (performance.now() - started < 1_500 || rounds < 3) {
    for (const e of events) evaluations += test(e);
    rounds++;
  }
  return (evaluations / (performance.now() - started)) * 1000;
}

export function benchMatcher(): Measurement[] {
  const compiled: CompiledPattern[] = Array.from({ length: PATTERNS }, (_, i) =>
    compilePattern(pattern(i)),
  );
  const events = Array.from({ length: EVENTS }, (_, i) => event(i));
  // Baseline: the cheapest possible rule, one string comparison per rule per event.
  const names = Array.from({ length: PATTERNS }, (_, i) => `tool_${i % 50}`);
  const baseline = timeEvaluations((e) => {
    const toolId = (e as { detail: { toolId: string } }).detail.toolId;
    let hits = 0;
    for (const name of names) if (toolId === name) hits++;
    return names.length + hits * 0;
  }, events);
  let matched = 0;
  const ours = timeEvaluations((e) => {
    for (const p of compiled) if (p.matches(e)) matched++;
    return compiled.length;
  }, events);
  if (matched === 0) throw new Error("the benchmark patterns never matched: the mix is wrong");
  return [
    measurement(
      `matcher: evaluations/s over ${PATTERNS} patterns`,
      "evaluations/s",
      ours,
      { name: "one string equality per rule (hand-written)", value: baseline },
      "higher",
    ),
  ];
}
