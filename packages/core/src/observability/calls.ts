import type { CallRecord } from "@toolbus/wire/model/call";
import type { LogFields, Logger } from "./log";
import { cacheStatus, callMetricPoints, type MetricsSink } from "./metrics";

/**
 * Which call a line is about, the same on every line of every step: the run, the call, the
 * tool and who asked (a key id, never the key).
 */
export function callFields(call: CallRecord): LogFields {
  return {
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    principal: call.requestedBy.id,
    ...(call.trace ? { traceId: call.trace.traceId } : {}),
  };
}

/** A logged input is cut here: a line must stay readable and within CloudWatch's 256 KB. */
const MAX_LOGGED_INPUT_CHARS = 4096;

/** The input as it goes on a log line: canonical JSON text, cut at MAX_LOGGED_INPUT_CHARS. */
export function loggedInput(input: unknown): string {
  const text = JSON.stringify(input) ?? "null";
  return text.length <= MAX_LOGGED_INPUT_CHARS
    ? text
    : `${text.slice(0, MAX_LOGGED_INPUT_CHARS)}… (${text.length} chars)`;
}

/** Where a call's steps are reported; absent in code that reports nothing (unit tests). */
export interface CallObservers {
  log?: Logger;
  metrics?: MetricsSink;
}

/**
 * A call's handler finished it: one line (outcome, failure kind, duration, cache, fallback,
 * dispatch) and its metric points, wherever the handler ran. Log bytes are billed on every
 * call, so the line carries nothing another field or the line's place already says: no `step`
 * (its message, `call finished`, is the step; only earlier steps' lines carry one), no empty
 * field (an absent failure kind or fallback is left out).
 */
export function reportFinished(
  observers: CallObservers,
  call: CallRecord,
  tool: { cacheable: boolean },
): void {
  const result = call.result;
  if (!result) return;
  observers.log?.info("call finished", {
    ...callFields(call),
    outcome: result.status,
    failureKind: result.failure?.kind,
    durationMs: result.durationMs,
    cache: cacheStatus(result, tool.cacheable),
    fallback: result.fallback?.to,
    dispatch: call.dispatch ?? "bus",
  });
  observers.metrics?.record(callMetricPoints(call, tool));
}
