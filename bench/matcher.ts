import { performance } from "node:perf_hooks";
import { type CompiledPattern, compilePattern, createPatternIndex } from "../packages/pattern/src";
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

/** Pattern counts the index is measured at: its rate should stay flat across them. */
const INDEX_SIZES = [100, 1_000, 10_000];
const INDEX_EVENTS = 512;
const KINDS = 8;
const MAX_MATCHES = 5;

/**
 * Pattern i of the index mix: kind i % 8 (exact, prefix, suffix, numeric, anything-but, exists,
 * wildcard, $or), on values numbered j = i / 8, so each kind has one pattern per j and an event
 * meets a kind's pattern only when it carries that kind's j. The last pattern has no anchor (it
 * can match through an absent field) and is checked against every event; events always carry
 * toolId, so it never matches.
 */
function indexedPattern(i: number, total: number): object {
  if (i === total - 1) return { detail: { toolId: [{ exists: false }] } };
  const j = Math.floor(i / KINDS);
  switch (i % KINDS) {
    case 0:
      return {
        source: ["toolbus"],
        "detail-type": ["ToolCallScheduled"],
        detail: { toolId: [`tool_${j}`] },
      };
    case 1:
      return { detail: { parentRunId: [{ prefix: `run-${j}-` }] } };
    case 2:
      return { detail: { callId: [{ suffix: `-${j}.call` }] } };
    case 3:
      return { detail: { durationMs: [{ numeric: [">=", j * 10, "<", j * 10 + 10] }] } };
    case 4:
      // anything-but alone would match nearly every event, as it would on AWS: real rules pair
      // it with a selective field, and the index anchors on that one.
      return {
        detail: { status: [{ "anything-but": ["succeeded", "cancelled"] }], toolset: [`set_${j}`] },
      };
    case 5:
      return { detail: { [`flag_${j}`]: [{ exists: true }] } };
    case 6:
      return { detail: { model: [{ wildcard: `model-${j}-*-v*` }] } };
    default:
      return {
        $or: [
          { detail: { queue: [`queue_${j}`] } },
          { detail: { priority: [{ numeric: ["=", 100_000 + j] }] } },
        ],
      };
  }
}

/** A small deterministic PRNG (mulberry32), so every run measures the same events. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Event e meets the patterns of (e % 6) kinds, chosen at random, each for a random j; every
 * other field holds a value no pattern names. So it matches 0 to 5 patterns.
 */
function indexedEvent(e: number, total: number, random: () => number) {
  const perKind = Math.max(1, Math.floor((total - 1) / KINDS));
  const kinds = new Set<number>();
  while (kinds.size < e % (MAX_MATCHES + 1)) kinds.add(Math.floor(random() * KINDS));
  const j = () => Math.floor(random() * perKind);
  const detail: Record<string, unknown> = {
    toolId: kinds.has(0) ? `tool_${j()}` : "tool_none",
    parentRunId: kinds.has(1) ? `run-${j()}-${e}` : `none-${e}`,
    callId: kinds.has(2) ? `c${e}-${j()}.call` : `c${e}-none`,
    durationMs: kinds.has(3) ? j() * 10 + (e % 10) : -1 - e,
    status: kinds.has(4) ? "failed" : "succeeded",
    toolset: kinds.has(4) ? `set_${j()}` : "set_none",
    model: kinds.has(6) ? `model-${j()}-large-v${e % 3}` : "model-none",
    queue: kinds.has(7) ? `queue_${j()}` : "queue_none",
    priority: e % 100,
    cached: e % 5 === 0,
    input: { query: `q${e}`, tags: ["a", "b", `t${e % 7}`] },
  };
  if (kinds.has(5)) detail[`flag_${j()}`] = true;
  return {
    version: "0",
    id: `e${e}`,
    "detail-type": "ToolCallScheduled",
    source: "toolbus",
    account: "000000000000",
    time: "2026-11-21T10:00:00Z",
    region: "us-east-1",
    resources: [],
    detail,
  };
}

const WINDOWS = 7;
const WINDOW_MS = 250;

/**
 * Events per second through `match`: the median of several short windows, each going on
 * through the events (round and round) until its time is up. On a shared 2-core machine one
 * long window takes whatever a neighbour's burst costs; the median of seven leaves that out.
 */
function timeEvents(match: (e: object) => unknown, events: object[]): number {
  const rates: number[] = [];
  let next = 0;
  // Window 0 warms up (the JIT, the caches) and is not counted.
  for (let w = 0; w <= WINDOWS; w++) {
    let count = 0;
    const started = performance.now();
    let elapsed = 0;
    while (elapsed < WINDOW_MS) {
      for (let i = 0; i < 8; i++) {
        match(events[next] as object);
        next = (next + 1) % events.length;
      }
      count += 8;
      elapsed = performance.now() - started;
    }
    if (w > 0) rates.push((count / elapsed) * 1000);
  }
  rates.sort((x, y) => x - y);
  return rates[WINDOWS >> 1] as number;
}

function benchIndexAt(total: number): Measurement {
  const patterns = Array.from({ length: total }, (_, i) => indexedPattern(i, total));
  const index = createPatternIndex<number>();
  // The linear scan tests the very patterns the index verifies its candidates with.
  const compiled = patterns.map((pattern, i) => index.add(i, pattern));
  const random = prng(total);
  const events = Array.from({ length: INDEX_EVENTS }, (_, e) => indexedEvent(e, total, random));
  const linear = (e: object) => {
    const found: number[] = [];
    for (let i = 0; i < compiled.length; i++)
      if ((compiled[i] as CompiledPattern).matches(e)) found.push(i);
    return found;
  };
  const indexed = timeEvents((e) => index.match(e), events);
  const scanned = timeEvents(linear, events);
  // The mix is part of the claim: check it, and that the index answers as the linear scan does.
  const sizes = new Set<number>();
  for (const e of events) {
    const expected = linear(e);
    if (expected.length > MAX_MATCHES) {
      throw new Error(`an event matches ${expected.length} patterns: the mix is wrong`);
    }
    if (JSON.stringify(index.match(e)) !== JSON.stringify(expected)) {
      throw new Error(`the index and the linear scan disagree on ${JSON.stringify(e)}`);
    }
    sizes.add(expected.length);
  }
  if (sizes.size < MAX_MATCHES + 1) {
    throw new Error(`events match only ${[...sizes].join(", ")} patterns: the mix is wrong`);
  }
  return measurement(
    `matcher: events/s through the pattern index, ${total.toLocaleString("en-US")} patterns (0-5 matches each)`,
    "events/s",
    indexed,
    { name: "every compiled pattern tested", value: scanned },
    "higher",
  );
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
    ...INDEX_SIZES.map(benchIndexAt),
    measurement(
      `matcher: evaluations/s over ${PATTERNS} patterns`,
      "evaluations/s",
      ours,
      { name: "one string equality per rule (hand-written)", value: baseline },
      "higher",
    ),
  ];
}
